package trainlint.rules.no_time_limit

import rego.v1

_slurm_job := {
	"sources": [{"path": "train.slurm", "format": "launch-script", "role": "entrypoint"}],
	"launcher": {"kind": "torchrun", "command": "torchrun --nproc_per_node 8 train.py"},
	"resources": {"world_size": 16, "time_limit_s": null, "scheduler": "slurm"},
	"estimates": {"run": {"hours": 9.4}},
}

test_slurm_script_without_time if {
	result := findings with input as _slurm_job
	result == {{
		"message": "SLURM job has no wall-clock limit: a hung run (a stuck NCCL collective, a dead data loader) on 16 GPUs keeps them allocated until someone cancels it; set #SBATCH --time=HH:MM:SS a little above the estimated ~9.4 h run",
		"pointer": "/resources/time_limit_s",
	}}
}

test_quiet_with_a_time_limit if {
	job := object.union(_slurm_job, {"resources": {"time_limit_s": 86400}})
	count(findings) == 0 with input as job
}

test_quiet_without_a_scheduler if {
	job := object.union(_slurm_job, {"resources": {"scheduler": null}})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_any_program_under_slurm if {
	job := {
		"launcher": {"kind": "fairseq-train"},
		"resources": {"gpu": {"model": "A100-80GB"}, "scheduler": "slurm"},
	}
	some f in findings with input as job
	startswith(f.message, "SLURM job has no wall-clock limit: a hung run (a stuck NCCL collective, a dead data loader) on its GPUs")
}

test_kubernetes_names_active_deadline if {
	job := {"resources": {"world_size": 8, "scheduler": "kubernetes"}}
	some f in findings with input as job
	contains(f.message, "Kubernetes job has no wall-clock limit")
	contains(f.message, "activeDeadlineSeconds")
}

test_axolotl_cloud_names_timeout if {
	job := {"resources": {"world_size": 8, "scheduler": "axolotl-cloud"}}
	some f in findings with input as job
	contains(f.message, "set timeout")
}

test_schedulers_come_from_params if {
	job := {"resources": {"world_size": 8, "scheduler": "kubernetes"}}
	count(findings) == 0 with input as job with data.trainlint.params.no_time_limit.schedulers as {"slurm": "--time"}
}

test_an_unknown_scheduler_is_quiet if {
	count(findings) == 0 with input as {"resources": {"world_size": 8, "scheduler": "lsf"}}
}

test_kubeflow_training_runtime_is_a_template if {
	job := {
		"resources": {"world_size": 8, "scheduler": "kubernetes"},
		"tags": {"trainer.kubeflow.org/framework": "torch"},
	}
	count(findings) == 0 with input as job
}

test_quiet_without_gpus if {
	count(findings) == 0 with input as {"resources": {"scheduler": "kubernetes"}}
}

# jobset's tpu-multislice example: a JobSet has no spec.activeDeadlineSeconds; the limit goes
# on each replicated Job, and its 32 TPU chips are no GPUs.
test_a_jobset_names_its_replicated_jobs_deadline_and_tpu_chips if {
	job := {"resources": {"world_size": 32, "accelerator": "tpu", "scheduler": "kubernetes", "scheduler_kind": "JobSet"}}
	some f in findings with input as job
	contains(f.message, "on 32 TPU chips keeps them allocated")
	contains(f.message, "; set spec.replicatedJobs[].template.spec.activeDeadlineSeconds (a JobSet has none of its own")
	not contains(f.message, "GPU")
}

test_each_kind_names_its_own_field if {
	kinds := {"PyTorchJob": "set spec.runPolicy.activeDeadlineSeconds", "Job": "set spec.activeDeadlineSeconds", "VolcanoJob": "set spec.tasks[].template.spec.activeDeadlineSeconds"}
	every kind, text in kinds {
		some f in findings with input as {"resources": {"world_size": 8, "scheduler": "kubernetes", "scheduler_kind": kind}}
		contains(f.message, text)
	}
}

test_a_kind_without_its_own_field_gets_the_general_advice if {
	job := {"resources": {"world_size": 8, "scheduler": "kubernetes", "scheduler_kind": "LeaderWorkerSet"}}
	some f in findings with input as job
	contains(f.message, "set spec.activeDeadlineSeconds (spec.runPolicy.activeDeadlineSeconds in a PyTorchJob")
}
