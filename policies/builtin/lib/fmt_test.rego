package trainlint.lib.fmt

import rego.v1

test_int if {
	[int(0), int(999.4), int(1234567.8), int(-1234.5), int(-0.4)] == ["0", "999", "1,234,568", "-1,235", "0"]
}

test_num if {
	[num(0), num(0.004), num(0.0444), num(0.444), num(1.25), num(9.96), num(61.5), num(1240.4), num(-0.5)] == ["0", "0", "0.044", "0.44", "1.3", "10", "62", "1,240", "-0.50"]
}

test_usd if {
	[usd(0.5), usd(9.994), usd(9.996), usd(1240.4), usd(-3.5)] == ["$0.50", "$9.99", "$10", "$1,240", "-$3.50"]
}

test_pct if {
	[pct(0.613), pct(0.02), pct(1)] == ["61%", "2.0%", "100%"]
}

test_gpu_memory if {
	[gpu_memory(85899345920), gpu_memory(151397597184), gpu_memory(25.5 * 1073741824), gpu_memory(3.5 * 1048576)] == ["80 GB", "141 GB", "26 GB", "3.5 MB"]
}

test_bytes if {
	[bytes(512), bytes(2048), bytes(3.5e6), bytes(112e9), bytes(2.3e12)] == ["512 B", "2.0 kB", "3.5 MB", "112 GB", "2.3 TB"]
}

test_duration if {
	[duration(0.01), duration(1.2), duration(19), duration(1000), duration(36000)] == ["10 ms", "1.2 s", "19 s", "17 min", "10 h"]
}

test_gpu_hours if {
	gpu_hours(310.4) == "310 GPU-h"
}

test_basis if {
	sources := {"a": "measured", "b": "declared", "c": "default"}
	basis(["a"]) == "measured" with input as {"estimates": {"sources": sources}}
	basis(["a", "b"]) == "declared" with input as {"estimates": {"sources": sources}}
	basis(["a", "c"]) == "estimated" with input as {"estimates": {"sources": sources}}
	basis(["missing"]) == "estimated" with input as {"estimates": {"sources": sources}}
	basis(["a"]) == "estimated" with input as {}
}

test_plural_and_steps if {
	[plural(1, "GPU"), plural(8, "GPU"), plural(1024, "GPU")] == ["1 GPU", "8 GPUs", "1,024 GPUs"]
	[steps(1), steps(1.0), steps(160)] == ["step", "step", "160 steps"]
}
