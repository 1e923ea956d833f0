package trainlint.rules.eval_too_frequent

import rego.v1

_job := {
	"sources": [{"path": "train.yaml", "format": "hf-trainer", "role": "config"}],
	"eval": {"strategy": "steps", "every_steps": 10},
	"logging": {"every_steps": 10},
	"training": {"max_steps": 20000},
	"estimates": {"gpus": 8, "step_time_s": 1, "price_per_gpu_hour": 3.5, "run": {"steps": 20000}},
	"provenance": {
		"/eval/strategy": {"file": "train.yaml", "line": 8, "column": 1},
		"/eval/every_steps": {"file": "train.yaml", "line": 9, "column": 1},
	},
}

test_states_evaluations_assumed_cost_and_fix if {
	result := findings with input as _job
	result == {{
		"message": "evaluation every 10 steps: 2,000 evaluations in a 20,000-step run; at an assumed ~10 training steps each, evaluation adds ~100% to the training time (~5.6 h); evaluate every ≥ 50 steps (400 evaluations)",
		"pointer": "/eval/every_steps",
		"waste": {"gpu_hours": ((1600 * 10) * 8) / 3600, "usd": (((1600 * 10) * 8) / 3600) * 3.5},
	}}
}

# What HF TrainingArguments leave unset: no evaluation by steps, eval_steps = logging_steps.
_hf := {"format": "hf-trainer", "file": "train.yaml", "line": 9, "column": 1}

_hf_strategy := {"/eval/strategy": object.union(_hf, {"value": "no", "key": "eval_strategy"})}

_hf_interval := {"/eval/every_steps": object.union(_hf, {
	"value": null, "same_as": "/logging/every_steps", "key": "eval_steps",
})}

test_hf_eval_steps_need_the_steps_strategy if {
	job := object.union(_job, {"eval": {"strategy": null}, "defaults": _hf_strategy})
	count(findings) == 0 with input as job
}

test_hf_eval_strategy_no if {
	job := object.union(_job, {"eval": {"strategy": "no"}})
	count(findings) == 0 with input as job
}

test_a_stated_strategy_beats_the_default if {
	job := object.union(_job, {"defaults": _hf_strategy})
	count(findings) == 1 with input as job
}

test_without_a_default_strategy_formats_evaluate_by_interval if {
	job := object.union(_job, {
		"eval": {"strategy": null},
		"sources": [{"path": "train.yaml", "format": "gpt-neox", "role": "config"}],
	})
	count(findings) == 1 with input as job
}

test_hf_eval_steps_default_to_logging_steps if {
	job := object.union(_job, {
		"eval": {"every_steps": null}, "logging": {"every_steps": 5}, "defaults": _hf_interval,
	})
	some f in findings with input as job
	startswith(f.message, "evaluation every 5 steps (eval_steps unset: logging_steps): 4,000 evaluations")
	f.pointer == "/logging/every_steps"
}

test_no_logging_interval_without_the_default if {
	job := object.union(_job, {"eval": {"every_steps": null}, "logging": {"every_steps": 5}})
	count(findings) == 0 with input as job
}

test_share_of_the_run if {
	job := object.union(_job, {"eval": {"every_steps": 0.001}})
	some f in findings with input as job
	startswith(f.message, "evaluation every 20 steps: 1,000 evaluations")
}

test_unknown_cost_still_fires_without_waste if {
	job := object.union(_job, {"estimates": {"step_time_s": null}})
	result := findings with input as job
	result == {{
		"message": "evaluation every 10 steps: 2,000 evaluations in a 20,000-step run; at an assumed ~10 training steps each, evaluation adds ~100% to the training time; evaluate every ≥ 50 steps (400 evaluations)",
		"pointer": "/eval/every_steps",
	}}
}

test_quiet_at_the_threshold if {
	job := object.union(_job, {"eval": {"every_steps": 50}})
	count(findings) == 0 with input as job
}

test_quiet_on_a_short_run if {
	job := object.union(_job, {"estimates": {"run": {"steps": 500}}})
	count(findings) == 0 with input as job
}

test_quiet_when_run_length_unknown if {
	job := object.union(_job, {"training": {"max_steps": null}, "estimates": {"run": {"steps": null}}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

# Megatron: --eval-interval 100 --eval-iters 100 is 100 forward-only batches (~33 training
# steps) every 100 steps: +33%, although 100 is above min_eval_every_steps.
_megatron := object.union(_job, {
	"sources": [{"path": "pretrain.sh", "format": "megatron", "role": "entrypoint"}],
	"eval": {"strategy": null, "every_steps": 100, "iters": 100},
})

test_stated_eval_iters_give_the_cost if {
	some f in findings with input as _megatron
	f.message == "evaluation every 100 steps: 200 evaluations in a 20,000-step run; at ~33 training steps each (100 forward-only eval iterations), evaluation adds ~33% to the training time (~1.9 h); evaluate every ≥ 167 steps (119 evaluations)"
	f.pointer == "/eval/every_steps"
}

test_cheap_stated_evaluations_stay_quiet if {
	# Megatron's usual --eval-interval 1000 --eval-iters 100 (~3%), and its examples'
	# --eval-interval 100 --eval-iters 32 (~11%): below max_overhead_fraction.
	job := object.union(_megatron, {"eval": {"every_steps": 1000}})
	count(findings) == 0 with input as job
	examples := object.union(_megatron, {"eval": {"every_steps": 100, "iters": 32}})
	count(findings) == 0 with input as examples
	count(findings) == 0 with input as job
}

test_frequent_cheap_evaluations_still_fire if {
	job := object.union(_megatron, {"eval": {"every_steps": 10, "iters": 1}})
	some f in findings with input as job
	contains(f.message, "(1 forward-only eval iterations)")
}
