package trainlint.lib.ranges

import rego.v1

_wide := {"estimates": {"ranges": {"/run/usd": [40.2, 160.4], "/checkpoint/overhead_fraction": [0.236, 0.524]}}}

_narrow := {"estimates": {"ranges": {"/run/usd": [90, 110]}}}

test_ends_of_a_range if {
	lowest("/run/usd", 100) == 40.2 with input as _wide
	highest("/run/usd", 100) == 160.4 with input as _wide
}

test_no_range_is_the_point if {
	lowest("/run/hours", 7) == 7 with input as _wide
	highest("/run/hours", 7) == 7 with input as _wide
}

test_wide_range_printed if {
	usd_text("/run/usd", 100) == "$40–160" with input as _wide
	pct_text("/checkpoint/overhead_fraction", 0.29) == "24–52%" with input as _wide
}

test_narrow_range_prints_the_point if {
	usd_text("/run/usd", 100) == "$100" with input as _narrow
}

test_hours_range if {
	hours_text("/run/hours", 70) == "26–94 h" with input as {"estimates": {"ranges": {"/run/hours": [26.4, 94.1]}}}
}

test_bytes_range_shares_its_unit if {
	bytes_text("/memory/total_bytes", 188e9) == "132–783 GB" with input as {"estimates": {"ranges": {"/memory/total_bytes": [132e9, 783e9]}}}
}
