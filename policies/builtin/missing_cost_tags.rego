# METADATA
# title: missing-cost-tags
# description: |
#   Fires once per GPU job that lacks one of the required cost tags (required_tags, by default
#   team and project) or leaves it empty; the message lists every missing tag. A job counts as
#   a GPU job when it holds GPUs, however it is launched: a known GPU model or count (from
#   #SBATCH --gres, a GPU resource limit, a launcher's process count or an annotation), or a
#   distributed launcher from gpu_launchers (a plain `python setup.py` does not), unless its
#   files state it requests no accelerator (resources.accelerator "none"). Tags come
#   from SLURM --account/--partition/--comment k=v, Kubernetes labels and annotations,
#   SkyPilot labels and trainlint annotations; keys are compared after normalisation (lower
#   case, '-' -> '_').
# related_resources:
#   - ref: https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/cost-alloc-tags.html
#     description: AWS, organizing and tracking costs using cost allocation tags
#   - ref: https://docs.cloud.google.com/bigtable/docs/creating-managing-labels
#     description: Google Cloud labels - forwarded to billing so charges can be broken down by label
#   - ref: https://slurm.schedmd.com/sbatch.html#OPT_account
#     description: Slurm sbatch --account, the account a job's resources are charged to
# custom:
#   id: TL401
#   severity: warning
#   category: governance
#   why: |
#     GPU jobs are the largest line of most ML bills, and cloud billing, Kubecost-style cluster
#     accounting and Slurm accounting can only split that spend by the tags, labels and
#     accounts a job carries. An untagged job lands in an unallocated bucket: no team sees its
#     cost, nobody is asked whether it was worth it, and a forgotten job keeps burning GPUs
#     without an owner. Tags cannot be added to a run after it was billed.
#   example: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     #SBATCH --comment="team=nlp"
#     torchrun --standalone --nproc_per_node=8 train.py --config sft.yaml
#   fix: |
#     # train.slurm
#     #SBATCH --gres=gpu:h100:8
#     #SBATCH --comment="team=nlp,project=llama3-sft"
#     torchrun --standalone --nproc_per_node=8 train.py --config sft.yaml
#   remediation: |
#     Add the missing tags where the job declares them: Kubernetes metadata labels, SkyPilot
#     resources.labels, SLURM --comment "team=...,project=...", or a trainlint annotation
#     (`# trainlint: tag.project=...`, `x-trainlint: {tags: ...}`).
package trainlint.rules.missing_cost_tags

import rego.v1

params := data.trainlint.params.missing_cost_tags

# Function names are unique in the pack: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	_uses_gpus
	not input.resources.accelerator == "none"
	count(_missing) > 0
	finding := {
		"message": concat("", [
			"missing cost ", _noun, ": ", concat(", ", _missing),
			"; GPU spend of this ", _what, " cannot be attributed",
		]),
		"pointer": "/tags",
	}
}

# The job as its files describe it: its launcher, else its scheduler (a PyTorchJob, a SLURM
# batch script) that holds the GPUs whatever command it runs.
_what := concat("", [input.launcher.kind, " job"]) if is_string(input.launcher.kind)

else := concat("", [input.resources.scheduler, " job"]) if is_string(input.resources.scheduler)

else := "job"

_missing := [tag | some tag in params.required_tags; not _tagged(tag)]

# Tag keys are normalised by the sources (lower case, "-" → "_"): cost-center is cost_center.
_tagged(tag) if {
	value := input.tags[replace(lower(tag), "-", "_")]
	is_string(value)
	trim_space(value) != ""
}

_uses_gpus if input.launcher.kind in params.gpu_launchers

_uses_gpus if is_number(input.resources.gpus_per_node)

_uses_gpus if is_number(input.resources.world_size)

_uses_gpus if is_string(input.resources.gpu.model)

_noun := "tag" if count(_missing) == 1
else := "tags"
