# METADATA
# title: uncapped-resume-loop
# description: |
#   Fires when the launch sits in a shell loop nothing ends (launcher.restart_loop is
#   "uncapped": while true, while :, until false or for ((;;)) around the launch with no
#   break, exit or return in the loop and no set -e before it). A loop with a counter
#   condition (while [ $i -lt 3 ]), a break after N tries, or a launcher's own bounded restarts
#   (torchrun --max-restarts 3) without such a loop never fires. The message says what the
#   loop can burn: the whole wall-clock limit (resources.time_limit_s) when one is set, else
#   the allocation until someone cancels it. Severity is warning either way: with a limit the
#   burn is bounded but still the whole limit on every GPU.
# related_resources:
#   - ref: https://pytorch.org/docs/stable/elastic/run.html
#     description: torchrun --max-restarts, bounded restarts of the worker group
#   - ref: https://slurm.schedmd.com/sbatch.html#OPT_time
#     description: sbatch --time, the wall-clock limit that ends an endless loop
# custom:
#   id: TL208
#   severity: warning
#   category: checkpointing
#   why: |
#     A resume loop relaunches the run after a crash so it continues from the last
#     checkpoint. When the crash is deterministic (an out-of-memory step, a corrupt
#     checkpoint, a bad data shard) every relaunch loads the checkpoint, reaches the same
#     point and crashes again: an uncapped loop repeats that until the allocation ends, with
#     every GPU billed and no progress made.
#   example: |
#     # train.sh
#     while true; do
#       torchrun --nproc_per_node 8 train.py --resume
#       sleep 30
#     done
#   fix: |
#     # train.sh
#     for attempt in 1 2 3; do
#       torchrun --nproc_per_node 8 train.py --resume && break
#       sleep 30
#     done
#   remediation: |
#     Cap the retries: loop over a fixed number of attempts and break on success, or drop
#     the loop and let the launcher restart a bounded number of times
#     (torchrun --max-restarts 3).
package trainlint.rules.uncapped_resume_loop

import rego.v1

import data.trainlint.lib.fmt

findings contains finding if {
	input.launcher.restart_loop == "uncapped"
	finding := {"message": _message, "pointer": "/launcher/restart_loop"}
}

_burn := concat("", ["up to its whole ", fmt.duration(input.resources.time_limit_s), " time limit"]) if {
	is_number(input.resources.time_limit_s)
} else := "its whole allocation, until someone cancels it (no time limit is set)"

_message := concat("", [
	"the launch is in a loop with no break, exit or retry cap: a run that crashes the same way ",
	"every time is relaunched and burns ", _burn,
	"; cap the attempts (for attempt in 1 2 3; ... && break) or use torchrun --max-restarts",
])
