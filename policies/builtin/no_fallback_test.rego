package trainlint.rules.no_fallback

import rego.v1

_job := {"features": [
	{"name": "flash-attn", "kind": "kernel", "experimental": true, "fallback": null},
	{"name": "liger", "kind": "kernel", "experimental": true, "fallback": null},
]}

test_each_feature_without_fallback_fires_at_its_key if {
	result := findings with input as _job
	result == {
		{
			"message": "flash-attn (experimental kernel) has no declared fallback: if it fails to build, import or run on the GPUs the job gets, the run stops with them allocated; test the job with sdpa and declare it with `# trainlint: fallback.flash-attn=sdpa`",
			"pointer": "/features/0",
		},
		{
			"message": "liger (experimental kernel) has no declared fallback: if it fails to build, import or run on the GPUs the job gets, the run stops with them allocated; test the job with it off and declare it with `# trainlint: fallback.liger=off`",
			"pointer": "/features/1",
		},
	}
}

test_declared_fallback_is_quiet if {
	job := {"features": [{"name": "flash-attn", "kind": "kernel", "fallback": "sdpa"}]}
	count(findings) == 0 with input as job
}

test_blank_fallback_still_fires if {
	job := {"features": [{"name": "fp8", "kind": "precision", "fallback": " "}]}
	some f in findings with input as job
	startswith(f.message, "fp8 (experimental precision) has no declared fallback")
	contains(f.message, "fallback.fp8=bf16")
}

test_feature_not_in_the_list_is_quiet if {
	job := {"features": [{"name": "sdpa", "kind": "kernel"}]}
	count(findings) == 0 with input as job
}

test_list_comes_from_params if {
	count(findings) == 1 with input as _job with data.trainlint.params.no_fallback.experimental as ["liger"]
}

test_quiet_without_features if {
	count(findings) == 0 with input as {"features": []}
	count(findings) == 0 with input as {}
}

test_optimizer_suggests_adamw if {
	job := {"features": [{"name": "muon", "kind": "optimizer"}]}
	some f in findings with input as job
	contains(f.message, "muon (experimental optimizer)")
	contains(f.message, "test the job with adamw")
}
