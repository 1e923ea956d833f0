package trainlint.rules.per_step_diagnostics

import rego.v1

test_each_diagnostic_is_a_finding_at_its_flag if {
	job := {"logging": {"per_step_diagnostics": {"num_zeros_in_grad": true, "params_norm": true}}}
	result := findings with input as job
	{f.pointer | some f in result} == {
		"/logging/per_step_diagnostics/num_zeros_in_grad",
		"/logging/per_step_diagnostics/params_norm",
	}
	some f in result
	f.pointer == "/logging/per_step_diagnostics/params_norm"
	startswith(f.message, "--log-params-norm is on: an extra reduction over all parameters")
	contains(f.message, "assumed")
}

test_quiet_when_off if {
	job := {"logging": {"per_step_diagnostics": {"params_norm": false}}}
	count(findings) == 0 with input as job
}

test_quiet_without_logging if {
	count(findings) == 0 with input as {}
}

test_unknown_diagnostic_is_ignored if {
	count(findings) == 0 with input as {"logging": {"per_step_diagnostics": {"other": true}}}
}
