# METADATA
# title: duplicate-experiment
# description: |
#   Fires when the org's scan database (`trainlint check --db URL`) holds a job in another
#   repository or path with the same experiment fingerprint: the same model, data,
#   hyper-parameters and hardware, ignoring cost tags, names, output folders and seeds. The
#   message names up to three of the other places and their owners' team tags. Without
#   `--db` the rule has nothing to compare with and never fires.
# related_resources:
#   - ref: https://docs.wandb.ai/guides/runs/grouping
#     description: Experiment tracking groups runs of one experiment so they are not repeated.
# custom:
#   id: TL406
#   severity: info
#   category: governance
#   why: |
#     The same fine-tune launched by two people, or re-run in full after a change that did
#     not touch the training, costs twice for one result. Seen one repository at a time the
#     copy looks like any other job; only the org's database of scanned jobs shows that the
#     experiment already ran, and who ran it.
#   example: |
#     # nlp/train.yaml (team nlp), with research/sft.yaml (team research) the same job
#     # trainlint check --db postgresql://trainlint@db/trainlint
#     model_name_or_path: meta-llama/Llama-3.1-8B
#     max_steps: 2000
#   fix: |
#     # reuse the research team's checkpoint, or change what the experiment tests
#     model_name_or_path: meta-llama/Llama-3.1-8B
#     max_steps: 2000
#     learning_rate: 1.0e-5
#   remediation: |
#     Ask the owners named in the message for their run's results or checkpoint; if the
#     repeat is intended (a reproduction), suppress the finding with a reason.
package trainlint.rules.duplicate_experiment

import rego.v1

params := data.trainlint.params.duplicate_experiment

findings contains finding if {
	count(_others) > 0
	finding := {"message": _message, "pointer": "/model"}
}

_others := [concat("", [o.repo, ":", o.path, " (team ", _team_of(o), ")"]) |
	some o in input.platform.duplicates
]

_team_of(o) := object.get(object.get(o, "tags", {}), "team", "untagged")

_shown := array.slice(_others, 0, params.max_named)

_more := sprintf(" and %d more", [count(_others) - params.max_named]) if {
	count(_others) > params.max_named
} else := ""

_message := concat("", [
	"the same experiment (model, data, hyper-parameters and GPUs; tags, outputs and seeds aside) is also in ",
	concat(", ", _shown), _more, ": reuse its results or say what this run changes",
])
