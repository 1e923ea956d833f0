# METADATA
# title: fmt
# description: |
#   Number formatting shared by the builtin rules, so every message reads the same way and
#   both embedded engines print the same text. Only constructs the two engines agree on are
#   used: round() (half away from zero), format_int() and concat(). Avoided: sprintf %d on a
#   float (regopy: undefined) or above 2^31 (regopy wraps), %.Nf (regorus drops the decimals
#   of integers; the engines round halves differently), %v on floats (different digits), and
#   sprintf %s/%v of a string computed by a builtin (regopy quotes it and emits invalid JSON).
package trainlint.lib.fmt

import rego.v1

# int(1234567.8) == "1,234,568": rounded, with thousands separators.
int(x) := concat("", [_sign(round(x)), _grouped(round(abs(x)))])

# num: about two significant digits, whole numbers from 10 on: "1,240", "61", "1.2",
# "0.44", "0.044"; "0" below 0.01.
num(x) := int(x) if abs(x) >= 9.95
else := _fixed(x, 1) if abs(x) >= 0.995
else := _fixed(x, 2) if abs(x) >= 0.0995
else := _fixed(x, 3) if abs(x) >= 0.00995
else := "0"

# usd(1240.4) == "$1,240"; usd(3.456) == "$3.46".
usd(x) := concat("", [_sign(round(x * 100)), "$", int(abs(x))]) if abs(x) >= 9.995
else := concat("", [_sign(round(x * 100)), "$", _fixed(abs(x), 2)])

# plural(8, "GPU") == "8 GPUs", plural(1, "GPU") == "1 GPU".
plural(n, noun) := concat(" ", [int(n), noun]) if round(n) == 1
else := concat("", [int(n), " ", noun, "s"])

# steps(1) == "step", steps(160) == "160 steps": reads after "every".
steps(n) := "step" if round(n) == 1
else := plural(n, "step")

# pct(0.615) == "62%": a fraction shown as a percentage.
pct(fraction) := concat("", [num(fraction * 100), "%"])

# bytes(112e9) == "112 GB": decimal units, as storage and GPU vendors quote them.
bytes(b) := _unit(b, 1e12, "TB") if abs(b) >= 1e12
else := _unit(b, 1e9, "GB") if abs(b) >= 1e9
else := _unit(b, 1e6, "MB") if abs(b) >= 1e6
else := _unit(b, 1e3, "kB") if abs(b) >= 1e3
else := _unit(b, 1, "B")

# gpu_memory(85899345920) == "80 GB": GPU memory as GPU vendors name it ("H100 80 GB"), in
# the binary gigabytes of the catalog's nominal capacities (an 80 GB part reports 81920 MiB
# in nvidia-smi), so a job's use and its GPU's capacity read in the same unit. Storage
# (checkpoints) stays in bytes() above.
gpu_memory(b) := _unit(b, 1099511627776, "TB") if abs(b) >= 1099511627776
else := _unit(b, 1073741824, "GB") if abs(b) >= 1073741824
else := _unit(b, 1048576, "MB") if abs(b) >= 1048576
else := bytes(b)

# duration(0.01) == "10 ms", duration(19) == "19 s", duration(900) == "15 min".
duration(s) := _unit(s, 0.001, "ms") if abs(s) < 0.995
else := _unit(s, 1, "s") if abs(s) < 99.5
else := _unit(s, 60, "min") if abs(s) < 5970
else := _unit(s, 3600, "h")

# gpu_hours(310.2) == "310 GPU-h".
gpu_hours(h) := _unit(h, 1, "GPU-h")

# basis(names): how the figures named in input.estimates.sources were obtained, for
# "(estimated)"-style labels: "measured" or "declared" only when all of them are.
basis(names) := "measured" if {
	every name in names {
		_source(name) == "measured"
	}
} else := "declared" if {
	every name in names {
		_source(name) in {"declared", "measured"}
	}
} else := "estimated"

_source(name) := input.estimates.sources[name] if is_string(input.estimates.sources[name])
else := "estimated"

_unit(x, size, unit) := concat(" ", [num(x / size), unit])

_sign(rounded) := "-" if rounded < 0
else := ""

# _fixed(x, d): x with d (1 to 3) decimals, from integer arithmetic only.
_fixed(x, d) := concat("", [_sign(t), format_int(whole, 10), ".", _padded(t_abs - (scale * whole), d)]) if {
	scale := [1, 10, 100, 1000][d]
	t := round(x * scale)
	t_abs := abs(t)
	whole := floor(t_abs / scale)
}

# _padded(7, 3) == "007": the digits after the decimal point.
_padded(n, d) := substring(concat("", ["000", format_int(n, 10)]), count(format_int(n, 10)) + 3 - d, d)

# 1234567 -> "1,234,567" for a non-negative integer; string slicing, not %, which regopy
# miscomputes on large integers.
_grouped(n) := concat(",", array.concat([substring(digits, 0, head)], tail)) if {
	digits := format_int(n, 10)
	k := count(digits)
	head := k - (3 * floor((k - 1) / 3))
	tail := [substring(digits, i, 3) | some i in numbers.range(0, k - 1); i >= head; (i - head) % 3 == 0]
}
