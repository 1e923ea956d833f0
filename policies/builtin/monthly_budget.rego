# METADATA
# title: monthly-budget
# description: |
#   Fires when, with `trainlint check --db URL`, this job takes its team's or project's
#   planned spend for the month past the budget the org pack sets (params.budgets: team or
#   project -> {usd, gpu_hours} a month). The month's planned spend is the cost per run x
#   declared runs (`# trainlint: runs=N`, default 1) of every job added or changed this month
#   in the database, other than this job's own earlier version, plus this job's. The message
#   gives the spend before and after this job, the budget, and the excess, which is the
#   finding's waste. The pack sets the severity; without budgets or `--db` it never fires.
# related_resources:
#   - ref: https://www.infracost.io/docs/infracost_cloud/guardrails/
#     description: Infracost guardrails warn in the pull request when a change crosses a budget.
# custom:
#   id: TL407
#   severity: warning
#   category: governance
#   why: |
#     A monthly budget that alerts after the invoice arrives stops nothing. The planned cost
#     of every training job is known when its config is merged, so the pull request that takes
#     a team past its month's budget can say so before the GPUs are paid for.
#   example: |
#     # train.slurm (team nlp, budget $40,000 in December; $36,000 already planned)
#     # trainlint: tag.team=nlp runs=2
#     #SBATCH --gres=gpu:h100:8
#     torchrun --nproc_per_node=8 train.py --config sft.yaml
#   fix: |
#     # train.slurm: one run this month, or a smaller configuration
#     # trainlint: tag.team=nlp runs=1
#     #SBATCH --gres=gpu:h100:8
#     torchrun --nproc_per_node=8 train.py --config sft.yaml
#   remediation: |
#     Run fewer times this month, move the run to next month, make it cheaper (the other
#     findings say how), or ask the platform team to raise the team's budget in the org pack.
package trainlint.rules.monthly_budget

import rego.v1

import data.trainlint.lib.fmt

findings contains finding if {
	some status in input.platform.budgets
	_budget_over_usd(status)
	excess := status.after_usd - _budget_higher(status.before_usd, status.budget_usd)
	message := _budget_message(status, fmt.usd(status.before_usd), fmt.usd(status.after_usd), fmt.usd(status.budget_usd))
	finding := object.union({"message": message, "pointer": "/tags"}, _budget_usd_waste(excess))
}

findings contains finding if {
	some status in input.platform.budgets
	not _budget_over_usd(status)
	_budget_over_hours(status)
	excess := status.after_gpu_hours - _budget_higher(status.before_gpu_hours, status.budget_gpu_hours)
	message := _budget_message(status, _budget_hours(status.before_gpu_hours), _budget_hours(status.after_gpu_hours), _budget_hours(status.budget_gpu_hours))
	finding := object.union({"message": message, "pointer": "/tags"}, _budget_hours_waste(excess))
}

# The excess is this job's share: above the budget, or above what was planned before it when
# the month was over already. (No max(): regopy 1.5 took the lower of two floats.)
_budget_higher(a, b) := a if a >= b
else := b

# The job's own price per GPU-hour (its run's dollars over its GPU-hours) turns an excess in
# one unit into the other; without it the finding states no waste.
_price := input.estimates.run.usd / input.estimates.run.gpu_hours if {
	is_number(input.estimates.run.usd)
	is_number(input.estimates.run.gpu_hours)
	input.estimates.run.gpu_hours > 0
}

_budget_usd_waste(usd) := {"waste": {"usd": usd, "gpu_hours": usd / _price}} if is_number(_price)
else := {}

_budget_hours_waste(hours) := {"waste": {"usd": hours * _price, "gpu_hours": hours}} if {
	is_number(_price)
} else := {}

_budget_over_usd(status) if {
	is_number(status.budget_usd)
	is_number(status.after_usd)
	status.after_usd > status.budget_usd
}

_budget_over_hours(status) if {
	is_number(status.budget_gpu_hours)
	is_number(status.after_gpu_hours)
	status.after_gpu_hours > status.budget_gpu_hours
}

_budget_hours(value) := concat("", [fmt.int(value), " GPU-hours"])

_budget_message(status, before, after, budget) := concat("", [
	"this job takes ", status.group, " ", status.key, " to ", after, " of its ", budget,
	" budget for ", status.month, " (", before, " planned before it)",
])
