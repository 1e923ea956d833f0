# METADATA
# title: time-limit-far-beyond-run
# description: |
#   Fires when a stated wall-clock limit (resources.time_limit_s: #SBATCH --time,
#   activeDeadlineSeconds, Megatron --exit-duration-in-mins, max_time...) is more than
#   max_ratio times the estimated run time at the high end of its range
#   (estimates.ranges["/run/hours"], else estimates.run.hours). Comparing against the high end
#   keeps a limit sized with slack for a slow estimate quiet, and a limit of at most
#   min_limit_hours (24: a day, a common site default) never fires, since it already bounds a
#   hang to a day whatever the run's length. Severity is info: the limit costs
#   nothing while the run is healthy; it only fails to bound a hung run.
# related_resources:
#   - ref: https://slurm.schedmd.com/sbatch.html#OPT_time
#     description: sbatch --time; the scheduler also backfills short jobs around a job with an honest limit.
#   - ref: https://kubernetes.io/docs/concepts/workloads/controllers/job/#job-termination-and-cleanup
#     description: Job activeDeadlineSeconds
# custom:
#   id: TL405
#   severity: info
#   category: governance
#   why: |
#     A time limit exists to bound what a hung run costs: a stuck NCCL collective keeps every
#     GPU allocated until the limit ends it. A limit of 500 hours on a run estimated at under
#     an hour bounds nothing: a hang still holds the GPUs for weeks. An honest limit also lets
#     SLURM's backfill scheduler start the job sooner.
#   example: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     #SBATCH --time=500:00:00
#     torchrun --nproc_per_node 8 pretrain_gpt.py \
#         --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 \
#         --micro-batch-size 4 --global-batch-size 256 --train-iters 500 --bf16 \
#         --tokenizer-type GPT2BPETokenizer
#   fix: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     #SBATCH --time=00:30:00
#     torchrun --nproc_per_node 8 pretrain_gpt.py \
#         --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 \
#         --micro-batch-size 4 --global-batch-size 256 --train-iters 500 --bf16 \
#         --tokenizer-type GPT2BPETokenizer
#   remediation: |
#     Set the limit a little above the estimated run time (`trainlint estimate` gives it, with
#     its range); resume from the last checkpoint when a run needs more than one allocation.
package trainlint.rules.time_limit_far_beyond_run

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges

params := data.trainlint.params.time_limit_far_beyond_run

# Helpers are rules, not functions (see log_every_step.rego).

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/resources/time_limit_s"}
}

_applies if {
	is_number(_limit_s)
	is_number(_high_s)
	_high_s > 0
	_limit_s > params.max_ratio * _high_s
	_limit_s > params.min_limit_hours * 3600
}

_limit_s := input.resources.time_limit_s

_hours := input.estimates.run.hours

_high_s := ranges.highest("/run/hours", _hours) * 3600 if is_number(_hours)

_message := concat("", [
	"time limit ", fmt.duration(_limit_s), " is ", fmt.num(_limit_s / _high_s),
	"x the estimated ~", ranges.hours_text("/run/hours", _hours),
	" run: a hung run holds its GPUs that long; set it a little above the estimate",
]) if _applies
