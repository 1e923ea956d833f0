# METADATA
# title: ranges
# description: |
#   The plausible range of an estimate (estimates.ranges, keyed by JSON pointer into the
#   estimates: "/run/usd") for rules to fire only when their conclusion holds over all of it,
#   and to print the range when it is wide. A number without a range entry is certain: its
#   low and high are its point.
package trainlint.lib.ranges

import rego.v1

import data.trainlint.lib.fmt

# The lowest plausible value of the estimate at `pointer` whose point value is `point`.
lowest(pointer, point) := input.estimates.ranges[pointer][0] if {
	is_number(input.estimates.ranges[pointer][0])
} else := point

# The highest plausible value.
highest(pointer, point) := input.estimates.ranges[pointer][1] if {
	is_number(input.estimates.ranges[pointer][1])
} else := point

# A range is wide when its ends are at least 1.5x apart: then a message gives both ends.
is_wide(pointer) if {
	lo := input.estimates.ranges[pointer][0]
	hi := input.estimates.ranges[pointer][1]
	lo > 0
	hi >= 1.5 * lo
}

# "$40–160" when the range is wide, else "$100" (the point).
usd_text(pointer, point) := concat("", [fmt.usd(lowest(pointer, point)), "–", _bare_usd(highest(pointer, point))]) if {
	is_wide(pointer)
} else := fmt.usd(point)

# "24–52%" when wide, else "29%".
pct_text(pointer, point) := concat("", [fmt.num(lowest(pointer, point) * 100), "–", fmt.pct(highest(pointer, point))]) if {
	is_wide(pointer)
} else := fmt.pct(point)

# "158–564 ms" when wide, else "423 ms"; durations in seconds.
duration_text(pointer, point) := _span(fmt.duration(lowest(pointer, point)), fmt.duration(highest(pointer, point))) if {
	is_wide(pointer)
} else := fmt.duration(point)

# "443–985 GPU-h" when wide, else "797 GPU-h".
gpu_hours_text(pointer, point) := concat("", [fmt.num(lowest(pointer, point)), "–", fmt.gpu_hours(highest(pointer, point))]) if {
	is_wide(pointer)
} else := fmt.gpu_hours(point)

_bare_usd(x) := trim_prefix(fmt.usd(x), "$")

# "140–783 GB" when wide, else "140 GB".
bytes_text(pointer, point) := _span(fmt.bytes(lowest(pointer, point)), fmt.bytes(highest(pointer, point))) if {
	is_wide(pointer)
} else := fmt.bytes(point)

# bytes_text in GPU memory's units ("24–56 GB" as vendors name them: fmt.gpu_memory).
gpu_memory_text(pointer, point) := _span(fmt.gpu_memory(lowest(pointer, point)), fmt.gpu_memory(highest(pointer, point))) if {
	is_wide(pointer)
} else := fmt.gpu_memory(point)

# "26–94 h" when wide, else "71 h"; for an estimate in hours.
hours_text(pointer, point) := _span(fmt.duration(lowest(pointer, point) * 3600), fmt.duration(highest(pointer, point) * 3600)) if {
	is_wide(pointer)
} else := fmt.duration(point * 3600)

# "26 h" and "94 h" read "26–94 h"; ends in different units keep both ("800 ms–1.6 s").
_span(lo, hi) := concat("", [trim_suffix(lo, _unit_suffix(hi)), "–", hi]) if {
	endswith(lo, _unit_suffix(hi))
} else := concat("", [lo, "–", hi])

_unit_suffix(text) := concat(" ", ["", _last_part(split(text, " "))])

_last_part(parts) := parts[count(parts) - 1]
