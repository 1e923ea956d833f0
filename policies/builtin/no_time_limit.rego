# METADATA
# title: no-time-limit
# description: |
#   Fires on a scheduled GPU job with no wall-clock limit (resources.time_limit_s unknown)
#   when its scheduler supports one. That is a SLURM batch script (a .slurm/.sbatch file, an
#   srun launch, or #SBATCH --account/--partition headers) without #SBATCH --time, a
#   Kubernetes Job/PyTorchJob/TrainJob/RayJob without activeDeadlineSeconds, or an axolotl
#   cloud YAML without timeout; a Kubeflow training runtime (a template), a bare torchrun with
#   no scheduler and a job that shows no GPUs (neither a count nor a model) never fire. The
#   message names the key to set and, when known, the estimated run time to size it from.
# related_resources:
#   - ref: https://slurm.schedmd.com/sbatch.html#OPT_time
#     description: sbatch --time; without it the partition's DefaultTime applies, often unlimited.
#   - ref: https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
#     description: Job activeDeadlineSeconds (Kubeflow jobs take it under runPolicy).
# custom:
#   id: TL403
#   severity: warning
#   category: governance
#   why: |
#     Distributed training hangs rather than crashes: a stuck NCCL collective, a dead data
#     loader worker or a deadlocked checkpoint write leaves every rank waiting with its GPUs
#     allocated and billed. A wall-clock limit bounds that loss to the limit's slack; without
#     one the job holds all its GPUs until a person notices, often days later.
#   example: |
#     # train.slurm
#     #SBATCH --nodes=2
#     #SBATCH --gres=gpu:h100:8
#     srun torchrun --nnodes=2 --nproc_per_node=8 train.py
#   fix: |
#     # train.slurm
#     #SBATCH --nodes=2
#     #SBATCH --gres=gpu:h100:8
#     #SBATCH --time=12:00:00
#     srun torchrun --nnodes=2 --nproc_per_node=8 train.py
#   remediation: |
#     Set the scheduler's limit a little above the expected run time (the estimate is in
#     `trainlint estimate`): #SBATCH --time=D-HH:MM:SS, spec.activeDeadlineSeconds (Kubeflow:
#     spec.runPolicy.activeDeadlineSeconds), axolotl cloud `timeout`. Resume from the last
#     checkpoint when a long run needs more than one allocation.
package trainlint.rules.no_time_limit

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.no_time_limit

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/resources/time_limit_s"}
}

_applies if {
	not is_number(input.resources.time_limit_s)
	_scheduler
	params.schedulers[_scheduler]
	not _template
	_uses_gpus
}

# The cost is idle GPUs: a job with no known GPU (a CPU smoke test) is left alone.
_uses_gpus if is_number(job.world_size)

_uses_gpus if is_string(job.gpu)

# A Kubeflow (Cluster)TrainingRuntime is a template for TrainJobs (labelled with its
# framework); the limit belongs on each TrainJob (spec.activeDeadlineSeconds).
_template if {
	some label in params.template_labels
	is_string(input.tags[label])
}

# The scheduler, in order of certainty; undefined for a job that runs where it is started.
_scheduler := "kubernetes" if {
	some source in input.sources
	source.format == "kubernetes"
} else := "slurm" if {
	_slurm
} else := "axolotl-cloud" if {
	some source in input.sources
	source.format == "axolotl"
	input.provenance["/resources/gpus_per_node"].file == source.path
}

_slurm if {
	some source in input.sources
	source.format == "launch-script"
	some suffix in params.slurm_suffixes
	endswith(lower(source.path), suffix)
}

_slurm if {
	is_string(input.launcher.command)
	startswith(input.launcher.command, "srun ")
}

# An srun launch, unless a training config names it (GPT-NeoX `launcher: slurm` runs inside an
# allocation whose limit the config cannot state).
_slurm if {
	input.launcher.kind == "srun"
	not _launcher_in_config
}

_launcher_in_config if {
	some source in input.sources
	source.role == "config"
	input.provenance["/launcher/kind"].file == source.path
}

# #SBATCH --account / --partition are SLURM's own options (the tags they set are located in
# the launch script).
_slurm if {
	some tag in ["account", "partition"]
	where := input.provenance[concat("", ["/tags/", tag])]
	some source in input.sources
	source.format == "launch-script"
	where.file == source.path
}

_names := {"slurm": "SLURM job", "kubernetes": "Kubernetes job", "axolotl-cloud": "axolotl cloud job"}

_message := concat("", [
	_names[_scheduler], " has no wall-clock limit: a hung run", _holding,
	" keeps them allocated until someone cancels it; set ", params.schedulers[_scheduler], _sizing,
]) if _applies

_holding := concat("", [" (a stuck NCCL collective, a dead data loader) on ", fmt.plural(job.world_size, "GPU")]) if {
	is_number(job.world_size)
} else := " (a stuck NCCL collective, a dead data loader) on its GPUs"

_sizing := concat("", [" a little above the estimated ~", fmt.duration(input.estimates.run.hours * 3600), " run"]) if {
	is_number(input.estimates.run.hours)
	input.estimates.run.hours > 0
} else := ""
