package trainlint.rules.unbounded_checkpoints

import rego.v1

_job := {
	"checkpoint": {"every_steps": 500, "keep_last": null},
	"estimates": {
		"checkpoint": {"size_bytes": 112e9, "saves": 40, "kept": 40, "storage_bytes": 4480e9},
		"sources": {"checkpoint.kept": "estimated", "checkpoint.storage_bytes": "catalog"},
	},
	"provenance": {"/checkpoint/every_steps": {"file": "train.yaml", "line": 6, "column": 1}},
}

test_states_saves_size_storage_price_and_fix if {
	result := findings with input as _job
	result == {{
		"message": "no checkpoint retention limit: 40 saves × 112 GB is ~4.5 TB (estimated), ~$103 per month at $0.023/GB-month (assumed price); keep the last 3 (save_total_limit / keep_last_n_checkpoints / save_top_k / keep_latest_k): ~336 GB",
		"pointer": "/checkpoint/every_steps",
	}}
}

test_quiet_with_a_retention_limit if {
	job := object.union(_job, {"checkpoint": {"keep_last": 3}})
	count(findings) == 0 with input as job
}

test_quiet_below_the_storage_threshold if {
	job := object.union(_job, {"estimates": {"checkpoint": {"storage_bytes": 200e9}}})
	count(findings) == 0 with input as job
}

test_quiet_when_storage_unknown if {
	job := object.union(_job, {"estimates": {"checkpoint": {"storage_bytes": null}}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_points_at_the_checkpoint_settings_without_an_interval if {
	job := object.remove(_job, {"provenance"})
	some f in findings with input as job
	f.pointer == "/checkpoint"
}

test_threshold_and_price_come_from_params if {
	count(findings) == 0 with input as _job with data.trainlint.params.unbounded_checkpoints.max_storage_bytes as 5e12
	some f in findings with input as _job with data.trainlint.params.unbounded_checkpoints.usd_per_gb_month as 0.1
	contains(f.message, "~$448 per month at $0.10/GB-month")
}

test_the_fleets_storage_price_replaces_the_assumed_one if {
	some f in findings with input as _job with data.trainlint.fleet as {"storage-price": 0.05}
	contains(f.message, "~$224 per month at $0.050/GB-month (the fleet's price)")
}

test_quiet_when_few_saves_are_kept if {
	job := object.union(_job, {"estimates": {"checkpoint": {"saves": 3, "kept": 3, "storage_bytes": 3e12, "size_bytes": 1e12}}})
	count(findings) == 0 with input as job
}

# detectron2 saves every SOLVER.CHECKPOINT_PERIOD (5000) and keeps every save: the default fires,
# and the message names the key left unset.
_defaulted := {
	"checkpoint": {"every_steps": null, "keep_last": null},
	"defaults": {"/checkpoint/every_steps": {"value": 5000, "key": "SOLVER.CHECKPOINT_PERIOD", "format": "detectron2"}},
	"estimates": {
		"checkpoint": {"size_bytes": 8.4e9, "every_steps": 5000, "saves": 147, "kept": 147, "storage_bytes": 1234.8e9},
		"sources": {"checkpoint.kept": "estimated", "checkpoint.storage_bytes": "catalog"},
	},
	"provenance": {},
}

test_a_framework_default_interval_fires_and_is_named if {
	result := findings with input as _defaulted
	result == {{
		"message": "no checkpoint retention limit: 147 saves × 8.4 GB (every 5,000 steps: `SOLVER.CHECKPOINT_PERIOD` not set: its default) is ~1.2 TB (estimated), ~$28 per month at $0.023/GB-month (assumed price); keep the last 3 (save_total_limit / keep_last_n_checkpoints / save_top_k / keep_latest_k): ~25 GB",
		"pointer": "/checkpoint",
	}}
}

test_quiet_with_a_framework_default_retention if {
	job := object.union(_defaulted, {"defaults": {"/checkpoint/keep_last": {"value": 2, "key": "save_period", "format": "ultralytics"}}})
	count(findings) == 0 with input as job
}
