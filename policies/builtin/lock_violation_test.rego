package trainlint.rules.lock_violation

import rego.v1

_violation := {
	"lock": "params.checkpoint_too_frequent.max_overhead_fraction",
	"pack": "acme",
	"detail": "0.5 is above the locked maximum 0.05",
	"where": "the repo config",
}

test_names_the_lock_the_pack_and_what_was_tried if {
	findings == {{
		"message": "the repo config loosens params.checkpoint_too_frequent.max_overhead_fraction, locked by pack 'acme': 0.5 is above the locked maximum 0.05 (not applied)",
		"pointer": "/lock_violations/0",
	}} with input as {"lock_violations": [_violation]}
}

test_without_who_says_a_setting if {
	some f in findings with input as {"lock_violations": [object.remove(_violation, ["where"])]}
	startswith(f.message, "a setting loosens")
}

test_quiet_without_violations if {
	count(findings) == 0 with input as {"lock_violations": []}
	count(findings) == 0 with input as {}
}

test_incomplete_violation_is_skipped if {
	count(findings) == 0 with input as {"lock_violations": [{"lock": "x"}]}
}
