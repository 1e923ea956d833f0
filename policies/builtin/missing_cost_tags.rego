# METADATA
# title: missing-cost-tags
# description: |
#   A job that launches GPUs without the organisation's cost tags (by default team and
#   project) cannot be attributed in the GPU bill, so nobody owns its spend. Fires once per
#   launching job that shows it uses GPUs (a distributed launcher from gpu_launchers, or a
#   known GPU model or count; a plain `python setup.py` is not a GPU job) and lists every
#   required tag that is absent or empty. Tag keys are compared after the job model's normalisation (lower case, '-' -> '_').
# custom:
#   id: TL401
#   severity: warning
#   category: governance
#   remediation: |
#     Add the missing tags where the job declares them: cluster manifest labels, SkyPilot
#     labels, or the tags section of the trainlint repo config.
package trainlint.rules.missing_cost_tags

import rego.v1

params := data.trainlint.params.missing_cost_tags

# Function names are unique in the pack: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	is_string(input.launcher.kind)
	_uses_gpus
	count(_missing) > 0
	finding := {
		"message": concat("", [
			"missing cost ", _noun, ": ", concat(", ", _missing),
			"; GPU spend of this ", input.launcher.kind, " job cannot be attributed",
		]),
		"pointer": "/tags",
	}
}

_missing := [tag | some tag in params.required_tags; not _tagged(tag)]

_tagged(tag) if {
	value := input.tags[tag]
	is_string(value)
	trim_space(value) != ""
}

_uses_gpus if input.launcher.kind in params.gpu_launchers

_uses_gpus if is_number(input.resources.gpus_per_node)

_uses_gpus if is_number(input.resources.world_size)

_uses_gpus if is_string(input.resources.gpu.model)

_noun := "tag" if count(_missing) == 1
else := "tags"
