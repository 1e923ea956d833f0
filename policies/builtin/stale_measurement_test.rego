package trainlint.rules.stale_measurement

import rego.v1

_t_job := {
	"id": "jobs/train.sh",
	"resources": {"world_size": 8},
	"estimates": {"gpus": 8},
	"provenance": {"/training/micro_batch_size": {"file": "train.yaml", "line": 4, "column": 1}},
	"measurements": {
		"fresh": false,
		"path": ".trainlint/measurements/jobs-train.sh.json",
		"measured_at": "2026-01-31T12:00:00Z",
		"changed": ["/resources/gpu/model", "/training/micro_batch_size"],
		"world_sizes": {"1": {"tokens_per_s": 4000}, "8": {"tokens_per_s": 30000}},
	},
}

test_names_changes_and_points_at_the_first_located_one if {
	result := findings with input as _t_job
	result == {{
		"message": "the probe measurement .trainlint/measurements/jobs-train.sh.json (2026-01-31T12:00:00Z) no longer matches the job: resources.gpu.model, training.micro_batch_size changed; its figures are ignored until it is measured again: `trainlint probe jobs/train.sh --world-sizes 1,8`",
		"pointer": "/training/micro_batch_size",
	}}
}

test_without_recorded_fields_points_at_the_file if {
	job := json.patch(_t_job, [
		{"op": "replace", "path": "/measurements/changed", "value": []},
		{"op": "replace", "path": "/measurements/world_sizes", "value": {}},
	])
	result := findings with input as job
	result == {{
		"message": "the probe measurement .trainlint/measurements/jobs-train.sh.json (2026-01-31T12:00:00Z) no longer matches the job; its figures are ignored until it is measured again: `trainlint probe jobs/train.sh --world-sizes 1,8`",
		"pointer": "/measurements",
	}}
}

test_quiet_when_fresh if {
	job := object.union(_t_job, {"measurements": {"fresh": true}})
	count(findings) == 0 with input as job
}

test_quiet_without_measurement if {
	job := json.patch(_t_job, [{"op": "replace", "path": "/measurements", "value": {}}])
	count(findings) == 0 with input as job
	count(findings) == 0 with input as {}
}
