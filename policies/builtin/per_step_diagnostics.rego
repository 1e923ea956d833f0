# METADATA
# title: per-step-diagnostics
# description: |
#   Fires once for each per-step diagnostic a job leaves on: Megatron-LM's
#   --log-num-zeros-in-grad (logging.per_step_diagnostics.num_zeros_in_grad) and
#   --log-params-norm (logging.per_step_diagnostics.params_norm). Severity is info: each is an
#   extra reduction over every gradient or parameter on every step, whatever --log-interval says,
#   but its cost is not estimated from the job, and a short debugging run may want it.
# related_resources:
#   - ref: https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py
#     description: Megatron-LM arguments - --log-num-zeros-in-grad and --log-params-norm
#   - ref: https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/training.py
#     description: Megatron-LM train_step - calc_params_l2_norm runs every iteration when --log-params-norm is set
# custom:
#   id: TL306
#   severity: info
#   category: logging
#   autofix:
#     safe: true
#     description: the diagnostic's switch stated true, set to false.
#   why: |
#     Megatron-LM computes these diagnostics inside every training step, not only on the steps
#     it logs: --log-params-norm runs calc_params_l2_norm over all parameters and an all-reduce
#     across the model-parallel ranks, --log-num-zeros-in-grad counts the zeros of every
#     gradient in the optimizer step. Each is another pass over memory the size of the model,
#     plus a collective, thousands of times per run, for a number that is read once every
#     log interval.
#   example: |
#     # train.sh
#     torchrun --nproc_per_node 8 pretrain_gpt.py \
#         --train-iters 500000 --log-interval 100 \
#         --log-params-norm --log-num-zeros-in-grad
#   fix: |
#     # train.sh
#     torchrun --nproc_per_node 8 pretrain_gpt.py \
#         --train-iters 500000 --log-interval 100
#   remediation: |
#     Drop --log-params-norm and --log-num-zeros-in-grad from production runs; turn them on for a
#     short run when investigating divergence or dead gradients.
package trainlint.rules.per_step_diagnostics

import rego.v1

# Helpers are rules, not functions (see log_every_step.rego).

findings contains finding if {
	some name, on in _diagnostics
	on == true
	is_string(_work[name])
	finding := {
		"message": concat("", [
			_flags[name], " is on: ", _work[name],
			" on every step, not only the logged ones (its cost is not estimated: assumed small",
			" per step, paid on all of them); drop it outside a debugging run",
		]),
		"pointer": concat("/", ["/logging/per_step_diagnostics", name]),
	}
}

_diagnostics := object.get(object.get(input, "logging", {}), "per_step_diagnostics", {})

_flags := {
	"num_zeros_in_grad": "--log-num-zeros-in-grad",
	"params_norm": "--log-params-norm",
}

_work := {
	"num_zeros_in_grad": "an extra reduction over all gradients (counting their zeros)",
	"params_norm": "an extra reduction over all parameters (their L2 norm) and an all-reduce",
}
