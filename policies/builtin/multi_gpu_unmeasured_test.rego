package trainlint.rules.multi_gpu_unmeasured

import rego.v1

_t_job := {
	"id": "jobs/train.sh",
	"resources": {"world_size": 8},
	"estimates": {"gpus": 8, "run": {"gpu_hours": 800, "usd": 2800}},
}

_t_sizes := {
	"1": {"tokens_per_s": 4000, "scaling_efficiency": 1},
	"2": {"tokens_per_s": 7600, "scaling_efficiency": 0.95},
	"8": {"tokens_per_s": 17600, "scaling_efficiency": 0.55},
}

_t_measured := object.union(_t_job, {"measurements": {"fresh": true, "path": ".trainlint/measurements/jobs-train.sh.json", "world_sizes": _t_sizes}})

test_unmeasured_says_how_to_measure if {
	result := findings with input as _t_job
	result == {{
		"message": "8 GPUs and no measurement at that size: the speedup over one GPU is assumed, not known; measure it with `trainlint probe jobs/train.sh --world-sizes 1,8`",
		"pointer": "/resources/world_size",
	}}
}

test_stale_measurement_counts_as_none if {
	job := object.union(_t_measured, {"measurements": {"fresh": false}})
	some f in findings with input as job
	contains(f.message, "no measurement at that size (.trainlint/measurements/jobs-train.sh.json is stale):")
}

test_measured_at_other_sizes_only if {
	job := object.union(_t_job, {"measurements": {"fresh": true, "world_sizes": {"1": {"tokens_per_s": 4000}}}})
	some f in findings with input as job
	contains(f.message, "no measurement at that size (measured at 1 only):")
}

test_low_measured_efficiency_reports_figures_waste_and_best_size if {
	result := findings with input as _t_measured
	count(result) == 1
	some f in result
	f.message == "measured scaling efficiency at 8 GPUs is 55% (17,600 tokens/s against 4,000 on 1 GPU) (measured), below 70%: ~45% of the GPU-hours buy no throughput; 1 GPU gave the best measured cost per token (~4,000 tokens/s per GPU against ~2,200 at 8)"
	f.pointer == "/resources/world_size"
	round(f.waste.gpu_hours) == 360
	round(f.waste.usd) == 1260
}

test_step_time_basis_reports_the_step_times_and_the_cheaper_size if {
	# An entrypoint probe of a plain DDP script: no tokens, the same per-rank batch (issue 21).
	sizes := {
		"1": {"step_time_s": {"median": 0.0015}, "scaling_efficiency": 1, "scaling_basis": "step_time"},
		"2": {"step_time_s": {"median": 0.0087}, "scaling_efficiency": 0.1724, "scaling_basis": "step_time"},
	}
	job := {
		"id": "run.sh",
		"resources": {"world_size": 2},
		"estimates": {"gpus": 2, "run": {"gpu_hours": 100, "usd": 350}},
		"measurements": {"fresh": true, "world_sizes": sizes},
	}
	result := findings with input as job
	count(result) == 1
	some f in result
	f.message == "measured scaling efficiency at 2 GPUs is 17% (8.7 ms per step against 1.5 ms on 1 GPU, the same per-rank batch) (measured), below 70%: ~83% of the GPU-hours buy no throughput; 1 GPU gave the best measured cost per unit of work (100% scaling efficiency against 17% at 2)"
	round(f.waste.usd) == 290
}

test_quiet_when_measured_efficiency_is_good if {
	job := object.union(_t_measured, {"measurements": {"world_sizes": {"8": {"scaling_efficiency": 0.9}}}})
	count(findings) == 0 with input as job
}

test_quiet_on_one_gpu_or_unknown_size if {
	count(findings) == 0 with input as {"resources": {"world_size": 1}, "estimates": {"gpus": 1}}
	count(findings) == 0 with input as {}
}

test_threshold_comes_from_params if {
	count(findings) == 0 with input as _t_measured with data.trainlint.params.multi_gpu_unmeasured.min_scaling_efficiency as 0.5
}

test_no_cheaper_size_suggests_fewer_syncs if {
	sizes := {"1": {"tokens_per_s": 1000, "scaling_efficiency": 1}, "8": {"tokens_per_s": 5000, "scaling_efficiency": 0.625}}
	job := object.union(_t_job, {"measurements": {"fresh": true, "world_sizes": sizes}})
	some f in findings with input as job
	contains(f.message, "; 1 GPU gave the best measured cost per token")
	job2 := object.union(_t_job, {"measurements": {"fresh": true, "world_sizes": {"8": {"tokens_per_s": 5000, "scaling_efficiency": 0.6}}}})
	some g in findings with input as job2
	contains(g.message, "; no measured size is cheaper per token;")
}

# The probe runs PyTorch on GPUs: it cannot measure a JAX job on TPU slices.
test_a_tpu_job_is_not_sent_to_the_probe if {
	job := object.union(_t_job, {"resources": {"world_size": 32, "accelerator": "tpu"}, "estimates": {"gpus": 32}})
	result := findings with input as job
	result == {{
		"message": "32 TPU chips and no measurement at that size: the speedup over one TPU chip is assumed, not known; time a few steps at 1 and at this size yourself (`trainlint probe` runs PyTorch on GPUs only)",
		"pointer": "/resources/world_size",
	}}
}
