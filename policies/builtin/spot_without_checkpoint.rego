# METADATA
# title: spot-without-checkpoint
# description: |
#   Fires when the job runs on spot or preemptible capacity (resources.spot) and saves no
#   checkpoint during the run. Spot comes from SkyPilot use_spot, Kubernetes spot/preemptible
#   node selectors or the annotation `# trainlint: spot=true`; no checkpoint means
#   checkpointing is off (strategy in no_checkpoint_strategies), no save is planned, the save
#   interval is at least the run's length, or the job saves per epoch on a single-epoch run.
#   How often the capacity is reclaimed is not known, so the message names what is at risk and
#   claims no waste.
# related_resources:
#   - ref: https://docs.skypilot.co/en/latest/examples/managed-jobs.html
#     description: SkyPilot managed jobs, recovering spot jobs from checkpoints
#   - ref: https://cloud.google.com/compute/docs/instances/spot
#     description: Google Cloud Spot VMs can be preempted at any time with a 30 s notice
#   - ref: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-interruptions.html
#     description: Amazon EC2 Spot interruptions with a two-minute notice
# custom:
#   id: TL204
#   severity: error
#   category: reliability
#   why: |
#     Spot GPUs cost a fraction of on-demand ones because the provider takes them back
#     whenever it needs them, at short notice (about 30 s to 2 minutes). A job that saves
#     nothing before it ends restarts from step 0 after each preemption, so it pays again for
#     every GPU-hour done so far, and a run longer than the typical time between preemptions
#     may never finish.
#   example: |
#     # task.yaml
#     # SkyPilot
#     resources:
#       accelerators: H100:8
#       use_spot: true
#     run: |
#       torchrun --nproc_per_node 8 train.py --max_steps 20000 --save_strategy no
#   fix: |
#     # task.yaml
#     resources:
#       accelerators: H100:8
#       use_spot: true
#     file_mounts:
#       /checkpoints:
#         name: my-ckpt-bucket
#         mode: MOUNT
#     run: |
#       torchrun --nproc_per_node 8 train.py --max_steps 20000 \
#         --save_steps 500 --save_total_limit 2 --output_dir /checkpoints
#   remediation: |
#     Save a resumable checkpoint periodically to storage that outlives the node (a bucket
#     or network volume), resume from the latest one on restart (SkyPilot managed jobs,
#     Kubernetes Job restarts), and keep the save interval well under the typical time
#     between preemptions; or run on on-demand capacity.
package trainlint.rules.spot_without_checkpoint

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.job

params := data.trainlint.params.spot_without_checkpoint

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/resources/spot"}
}

_applies if {
	input.resources.spot == true
	_why
}

_run := input.estimates.run

_ckpt := input.estimates.checkpoint

_strategy := lower(input.checkpoint.strategy) if is_string(input.checkpoint.strategy)

# Why nothing is saved during the run; the first that holds.
_why := concat("", ["checkpointing off (strategy \"", input.checkpoint.strategy, "\")"]) if {
	_strategy in params.no_checkpoint_strategies
} else := concat("", [
	"checkpoint every ", fmt.steps(_ckpt.every_steps), " on a ", fmt.int(_run.steps),
	"-step run",
]) if {
	is_number(_ckpt.every_steps)
	is_number(_run.steps)
	_ckpt.every_steps >= _run.steps
} else := "checkpoint per epoch on a single-epoch run" if {
	_strategy == "epoch"
	is_number(input.training.epochs)
	input.training.epochs <= 1
} else := "no checkpoint planned" if {
	is_number(_ckpt.saves)
	_ckpt.saves == 0
}

_message := concat("", [
	"spot capacity with ", _why, ": a preemption restarts the run from step 0", _at_risk,
	"; save a resumable checkpoint periodically to storage that outlives the node and ",
	"resume from it, or use on-demand capacity",
]) if _applies

_at_risk := concat("", [
	", losing up to the whole ~", fmt.duration(_run.hours * 3600), " run (",
	fmt.basis(["run.hours"]), ")", _gpus, _cost,
]) if {
	is_number(_run.hours)
} else := ""

_gpus := concat("", [" on ", fmt.plural(job.world_size, "GPU")]) if is_number(job.world_size)
else := ""

_cost := concat("", [", ~", fmt.gpu_hours(_run.gpu_hours), " / ", fmt.usd(_run.usd), " each time"]) if {
	is_number(_run.gpu_hours)
	is_number(_run.usd)
} else := concat("", [", ~", fmt.gpu_hours(_run.gpu_hours), " each time"]) if {
	is_number(_run.gpu_hours)
} else := ""
