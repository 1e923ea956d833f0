package trainlint.rules.dataloader_starvation

import rego.v1

_job := {
	"sources": [{"path": "train.yaml", "format": "hf-trainer", "role": "config"}],
	"data": {"num_workers": 0},
	"measurements": {},
	"estimates": {"gpus": 8, "run": {"gpu_hours": 400, "usd": 1400}},
	"provenance": {
		"/data/num_workers": {"file": "train.yaml", "line": 9, "column": 25},
		"/training/micro_batch_size": {"file": "train.yaml", "line": 3, "column": 30},
		"/model/name": {"file": "train.yaml", "line": 2, "column": 21},
	},
}

test_declared_zero_workers_fires_without_cost if {
	result := findings with input as _job
	result == {{
		"message": "0 data loader workers (declared) on 8 GPUs: batches are loaded in the training process between steps while the GPUs wait; data wait is not measured, so no cost is estimated; use ≥ 2 workers (dataloader_num_workers / num_workers) with pinned memory",
		"pointer": "/data/num_workers",
	}}
}

_hf_default := {"/data/num_workers": {
	"value": 0, "format": "hf-trainer", "key": "dataloader_num_workers",
	"file": "train.yaml", "line": 1, "column": 1,
}}

test_framework_default_when_unset if {
	job := object.union(_job, {"data": {"num_workers": null}, "defaults": _hf_default})
	some f in findings with input as job
	startswith(f.message, "0 data loader workers (not set: the hf-trainer default) on 8 GPUs")
	f.pointer == "/training/micro_batch_size"
}

test_top_of_the_file_without_a_batch_size if {
	job := object.union(_job, {
		"data": {"num_workers": null}, "defaults": _hf_default,
		"provenance": {"/training/micro_batch_size": {"file": "other.yaml"}},
	})
	some f in findings with input as job
	f.pointer == "/model/name"
}

test_no_default_when_no_framework_states_one if {
	job := object.union(_job, {"data": {"num_workers": null}})
	count(findings) == 0 with input as job
}

test_a_stated_count_beats_the_default if {
	job := object.union(_job, {"data": {"num_workers": 4}, "defaults": _hf_default})
	count(findings) == 0 with input as job
}

test_measured_wait_decides_and_costs if {
	job := object.union(_job, {"measurements": {"data_wait_fraction": 0.25}})
	result := findings with input as job
	result == {{
		"message": "data wait ~25% of the run (measured) with 0 data loader workers (declared) on 8 GPUs: the GPUs idle while batches load; use ≥ 2 workers (dataloader_num_workers / num_workers) with pinned memory",
		"pointer": "/data/num_workers",
		"waste": {"gpu_hours": 100, "usd": 350},
	}}
}

test_measured_wait_fires_with_enough_workers if {
	job := object.union(_job, {"data": {"num_workers": 8}, "measurements": {"data_wait_fraction": 0.3}})
	count(findings) == 1 with input as job
}

test_low_measured_wait_silences_few_workers if {
	job := object.union(_job, {"measurements": {"data_wait_fraction": 0.02}})
	count(findings) == 0 with input as job
}

test_quiet_with_enough_workers if {
	job := object.union(_job, {"data": {"num_workers": 4}})
	count(findings) == 0 with input as job
}

test_quiet_without_gpus if {
	job := object.union(_job, {"estimates": {"gpus": null}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _job with data.trainlint.params.dataloader_starvation.min_workers as 0
}
