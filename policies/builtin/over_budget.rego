# METADATA
# title: over-budget
# description: |
#   Fires once per budget the estimated cost of one run exceeds: dollars (estimates.run.usd)
#   or GPU-hours (estimates.run.gpu_hours). The budget is the job's own `# trainlint:
#   budget_usd=500` or `budget_gpu_hours=...` annotation, else the pack defaults
#   max_usd_per_job and max_gpu_hours_per_job (null by default: no budget). The message gives
#   the estimate, the budget, where the budget comes from and the excess, which is also the
#   finding's waste.
#   With an uncertain input it fires only when even the cheapest plausible run
#   (estimates.ranges) is over the budget; the message gives the range when it is wide.
# related_resources:
#   - ref: https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-managing-costs.html
#     description: Cloud budgets alert after the money is spent; a pre-launch check stops the run before.
# custom:
#   id: TL402
#   severity: error
#   category: governance
#   why: |
#     A training run is billed for every GPU-hour it holds: steps x step time x GPUs x the
#     hourly price. A config that quietly doubles max_steps or the GPU count doubles the bill,
#     and the overrun shows on the invoice weeks after the run. The estimate is known before
#     launch, so the overrun is too.
#   example: |
#     # train.slurm
#     # trainlint: budget_usd=200
#     #SBATCH --gres=gpu:h100:8
#     torchrun --nproc_per_node=8 train.py --config sft.yaml
#     # sft.yaml
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_seq_length: 4096
#     per_device_train_batch_size: 4
#     max_steps: 20000
#   fix: |
#     # train.slurm
#     # trainlint: budget_usd=200
#     #SBATCH --gres=gpu:h100:8
#     torchrun --nproc_per_node=8 train.py --config sft.yaml
#     # sft.yaml
#     model_name_or_path: meta-llama/Meta-Llama-3-8B
#     max_seq_length: 4096
#     per_device_train_batch_size: 4
#     max_steps: 2000
#   remediation: |
#     Shorten the run (max_steps, epochs), use fewer or cheaper GPUs (see TL101's alternatives),
#     or, when the spend is intended, raise the per-job budget annotation with a reviewer's
#     approval. Org packs set max_usd_per_job / max_gpu_hours_per_job for every job.
package trainlint.rules.over_budget

import rego.v1

import data.trainlint.lib.fmt
import data.trainlint.lib.ranges

params := data.trainlint.params.over_budget

# Helpers are rules, not functions (regopy: function names must be unique across packages);
# every helper that reads a possibly-null number is guarded by is_number first.

_run := input.estimates.run

findings contains finding if {
	_usd_over
	finding := object.union({"message": _usd_message, "pointer": _usd_pointer}, _usd_waste)
}

findings contains finding if {
	_hours_over
	finding := object.union({"message": _hours_message, "pointer": _hours_pointer}, _hours_waste)
}

# --- USD -------------------------------------------------------------------------------

_usd_budget := input.budget.usd if is_number(input.budget.usd)
else := params.max_usd_per_job if is_number(params.max_usd_per_job)

_usd_over if {
	is_number(_run.usd)
	is_number(_usd_budget)
	ranges.lowest("/run/usd", _run.usd) > _usd_budget
}

_usd_excess := _run.usd - _usd_budget if _usd_over

_usd_message := concat("", [
	"estimated ~", ranges.usd_text("/run/usd", _run.usd), " per run (", _usd_detail, fmt.basis(["run.usd"]),
	") is over the ", fmt.usd(_usd_budget), " ", _usd_origin, " by ~", fmt.usd(_usd_excess),
	" (+", fmt.pct(_usd_excess / _usd_budget), "); ", _advice,
]) if {
	_usd_over
	_usd_budget > 0
} else := concat("", [
	"estimated ~", ranges.usd_text("/run/usd", _run.usd), " per run (", _usd_detail, fmt.basis(["run.usd"]),
	") is over the ", fmt.usd(_usd_budget), " ", _usd_origin, "; ", _advice,
]) if _usd_over

_usd_detail := concat("", [ranges.gpu_hours_text("/run/gpu_hours", _run.gpu_hours), _on_gpus, ", "]) if {
	_usd_over
	is_number(_run.gpu_hours)
} else := ""

_usd_origin := "per-job budget (budget_usd annotation)" if is_number(input.budget.usd)
else := "pack budget (max_usd_per_job)"

_usd_pointer := "/budget/usd" if is_number(input.budget.usd)
else := _size_pointer

_usd_waste := {"waste": {"usd": _usd_excess, "gpu_hours": (_run.gpu_hours * _usd_excess) / _run.usd}} if {
	_usd_over
	is_number(_run.gpu_hours)
	_run.usd > 0
} else := {}

# --- GPU-hours ---------------------------------------------------------------------------

_hours_budget := input.budget.gpu_hours if is_number(input.budget.gpu_hours)
else := params.max_gpu_hours_per_job if is_number(params.max_gpu_hours_per_job)

_hours_over if {
	is_number(_run.gpu_hours)
	is_number(_hours_budget)
	ranges.lowest("/run/gpu_hours", _run.gpu_hours) > _hours_budget
}

_hours_excess := _run.gpu_hours - _hours_budget if _hours_over

_hours_message := concat("", [
	"estimated ~", ranges.gpu_hours_text("/run/gpu_hours", _run.gpu_hours), " per run (", _gpus_comma,
	fmt.basis(["run.gpu_hours"]), ") is over the ", fmt.gpu_hours(_hours_budget), " ",
	_hours_origin, " by ~", fmt.gpu_hours(_hours_excess), " (+",
	fmt.pct(_hours_excess / _hours_budget), "); ", _advice,
]) if {
	_hours_over
	_hours_budget > 0
} else := concat("", [
	"estimated ~", ranges.gpu_hours_text("/run/gpu_hours", _run.gpu_hours), " per run (", _gpus_comma,
	fmt.basis(["run.gpu_hours"]), ") is over the ", fmt.gpu_hours(_hours_budget), " ",
	_hours_origin, "; ", _advice,
]) if _hours_over

_hours_origin := "per-job budget (budget_gpu_hours annotation)" if is_number(input.budget.gpu_hours)
else := "pack budget (max_gpu_hours_per_job)"

_hours_pointer := "/budget/gpu_hours" if is_number(input.budget.gpu_hours)
else := _size_pointer

_hours_waste := {"waste": {"gpu_hours": _hours_excess, "usd": (_run.usd * _hours_excess) / _run.gpu_hours}} if {
	_hours_over
	is_number(_run.usd)
	_run.gpu_hours > 0
} else := {}

# --- shared ------------------------------------------------------------------------------

# With a pack budget there is no budget fact: point at what sets the run's size.
_size_pointer := "/training/max_steps" if input.provenance["/training/max_steps"]
else := "/resources/world_size" if input.provenance["/resources/world_size"]
else := "/resources/gpus_per_node"

# A guessed GPU count is shown as its range ("1–8× H100-SXM").
_gpus_text := concat("", [
	fmt.int(ranges.lowest("/gpus", input.estimates.gpus)), "–",
	fmt.int(ranges.highest("/gpus", input.estimates.gpus)), "× ", input.estimates.gpu,
]) if {
	is_number(input.estimates.ranges["/gpus"][0])
	is_string(input.estimates.gpu)
} else := concat("", [fmt.int(input.estimates.gpus), "× ", input.estimates.gpu]) if {
	is_number(input.estimates.gpus)
	is_string(input.estimates.gpu)
}

_on_gpus := concat("", [" on ", _gpus_text]) if _gpus_text
else := ""

_gpus_comma := concat("", [_gpus_text, ", "]) if _gpus_text
else := ""

_advice := "shorten the run, use fewer or cheaper GPUs, or raise the budget"
