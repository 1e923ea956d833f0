# METADATA
# title: no-time-limit
# description: |
#   Fires on a GPU job with no wall-clock limit (resources.time_limit_s unknown) whose
#   scheduler supports one (resources.scheduler, as its files state it): any SLURM batch
#   script (#SBATCH headers, a .slurm/.sbatch file) or srun launch without #SBATCH --time,
#   whatever program it runs; a Kubernetes Job/PyTorchJob/TrainJob/RayJob without
#   activeDeadlineSeconds; an axolotl cloud YAML without timeout. A Kubeflow training runtime
#   (a template), a bare torchrun with no scheduler and a job that shows no GPUs (neither a
#   count nor a model) never fire, nor does a job whose launcher passes a limit when none is
#   written (submitit's 5 minutes, Hydra's submitit launcher's 60: a framework default). The
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
#   autofix:
#     safe: true
#     description: adds `#SBATCH --time` after the script's last `#SBATCH` line, set to the run's upper estimated hours times 1.5 plus 30 minutes, rounded up to 15 minutes; only in a SLURM script whose run length is estimated.
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
	not _framework_limit
	params.schedulers[_scheduler]
	not _template
	_uses_gpus
}

_scheduler := input.resources.scheduler

# A launcher that always passes a time limit when none is written (submitit: 5 minutes,
# Hydra's submitit launcher: 60) bounds the job: it is stated as the framework's default.
_framework_limit if is_number(input.defaults["/resources/time_limit_s"].value)

# The cost is idle GPUs: a job with no known GPU (a CPU smoke test) is left alone.
_uses_gpus if is_number(job.world_size)

_uses_gpus if is_string(job.gpu)

# A Kubeflow (Cluster)TrainingRuntime is a template for TrainJobs (labelled with its
# framework); the limit belongs on each TrainJob (spec.activeDeadlineSeconds).
_template if {
	some label in params.template_labels
	is_string(input.tags[label])
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
