package trainlint.rules.no_time_limit

import rego.v1

_slurm_job := {
	"sources": [{"path": "train.slurm", "format": "launch-script", "role": "entrypoint"}],
	"launcher": {"kind": "torchrun", "command": "torchrun --nproc_per_node 8 train.py"},
	"resources": {"world_size": 16, "time_limit_s": null},
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

test_quiet_for_a_bare_torchrun_script if {
	job := object.union(_slurm_job, {"sources": [{"path": "run.sh", "format": "launch-script", "role": "entrypoint"}]})
	count(findings) == 0 with input as job
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}

test_srun_launch_is_slurm if {
	job := {
		"sources": [{"path": "run.sh", "format": "launch-script"}],
		"launcher": {"kind": "torchrun", "command": "srun torchrun train.py"},
		"resources": {"gpu": {"model": "A100-80GB"}},
	}
	some f in findings with input as job
	startswith(f.message, "SLURM job has no wall-clock limit: a hung run (a stuck NCCL collective, a dead data loader) on its GPUs")
}

test_sbatch_partition_header_is_slurm if {
	job := {
		"sources": [{"path": "run.sh", "format": "launch-script"}],
		"provenance": {"/tags/partition": {"file": "run.sh", "line": 3, "column": 9}},
		"resources": {"world_size": 4},
	}
	count(findings) == 1 with input as job
}

test_kubernetes_names_active_deadline if {
	job := {"sources": [{"path": "job.yaml", "format": "kubernetes"}], "resources": {"world_size": 8}}
	some f in findings with input as job
	contains(f.message, "Kubernetes job has no wall-clock limit")
	contains(f.message, "activeDeadlineSeconds")
}

test_axolotl_cloud_names_timeout if {
	job := {
		"sources": [{"path": "cloud.yaml", "format": "axolotl"}],
		"provenance": {"/resources/gpus_per_node": {"file": "cloud.yaml", "line": 2, "column": 1}},
		"resources": {"world_size": 8},
	}
	some f in findings with input as job
	contains(f.message, "set timeout")
}

test_axolotl_training_config_alone_is_quiet if {
	job := {"sources": [{"path": "lora.yml", "format": "axolotl"}]}
	count(findings) == 0 with input as job
}

test_schedulers_come_from_params if {
	job := {"sources": [{"path": "job.yaml", "format": "kubernetes"}], "resources": {"world_size": 8}}
	count(findings) == 0 with input as job with data.trainlint.params.no_time_limit.schedulers as {"slurm": "--time"}
}

test_srun_launcher_kind_is_slurm if {
	count(findings) == 1 with input as {"launcher": {"kind": "srun"}, "resources": {"world_size": 2}}
}

test_srun_named_by_a_training_config_is_quiet if {
	job := {
		"sources": [{"path": "neox.yml", "format": "gpt-neox", "role": "config"}],
		"launcher": {"kind": "srun"},
		"provenance": {"/launcher/kind": {"file": "neox.yml", "line": 3, "column": 1}},
	}
	count(findings) == 0 with input as job
}

test_kubeflow_training_runtime_is_a_template if {
	job := {
		"sources": [{"path": "runtime.yaml", "format": "kubernetes"}],
		"tags": {"trainer.kubeflow.org/framework": "torch"},
	}
	count(findings) == 0 with input as job
}

test_quiet_without_gpus if {
	job := {"sources": [{"path": "job.yaml", "format": "kubernetes"}], "resources": {}}
	count(findings) == 0 with input as job
}
