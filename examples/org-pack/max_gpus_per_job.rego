# METADATA
# title: max-gpus-per-job
# description: |
#   Fires when a job asks for more GPUs (resources.world_size: nodes x GPUs per node) than the
#   organisation lets one job take without a capacity review (params max_gpus). A job whose
#   GPU count is unknown stays quiet.
# related_resources:
#   - ref: https://slurm.schedmd.com/sbatch.html#OPT_gpus-per-node
#     description: sbatch --nodes and --gpus-per-node set the GPU count of a SLURM job.
#   - ref: https://pytorch.org/docs/stable/elastic/run.html
#     description: torchrun --nnodes and --nproc_per_node set the world size.
# custom:
#   id: ACME001
#   severity: warning
#   category: governance
#   why: |
#     A job that takes a large share of the cluster blocks every other team's queue for as
#     long as it runs, and a mistake in it (a wrong batch size, a hang) is paid for on every
#     one of its GPUs. A review before the run catches both while they are still cheap.
#   example: |
#     # train.slurm
#     #SBATCH --nodes=16
#     #SBATCH --gpus-per-node=8
#     srun torchrun --nnodes=16 --nproc_per_node=8 train.py
#   fix: |
#     # train.slurm
#     #SBATCH --nodes=8
#     #SBATCH --gpus-per-node=8
#     srun torchrun --nnodes=8 --nproc_per_node=8 train.py
#   remediation: |
#     Run on at most max_gpus GPUs, or get the capacity review and record it as a waiver
#     (rule, path, reason, expires, approved_by) in the repository's trainlint config.
package trainlint.rules.max_gpus_per_job

import rego.v1

params := data.trainlint.params.max_gpus_per_job

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/resources/world_size"}
}

_applies if {
	is_number(input.resources.world_size)
	is_number(params.max_gpus)
	input.resources.world_size > params.max_gpus
}

# Guarded by _applies: regorus evaluates a complete rule even when its value is not needed.
_message := concat("", [
	"job runs on ", format_int(input.resources.world_size, 10), " GPUs, over the ",
	format_int(params.max_gpus, 10), " one job may use without a capacity review",
]) if _applies
