# METADATA
# title: job
# description: |
#   Facts about the job that several rules read, each taken from the estimates (which resolve
#   launcher flags and the GPU catalog) and else from what the job declares.
package trainlint.lib.job

import rego.v1

# GPUs the job runs on; a world size the estimates guessed (source "default": the job does not
# say how many GPUs each node runs) is not the job's, only the middle of a range.
world_size := input.estimates.gpus if {
	is_number(input.estimates.gpus)
	not _guessed_world
}
else := input.resources.world_size if is_number(input.resources.world_size)

# The GPU's catalog name, else its name as the job wrote it.
gpu := input.estimates.gpu if is_string(input.estimates.gpu)
else := input.resources.gpu.model if is_string(input.resources.gpu.model)

_guessed_world if input.estimates.sources.gpus == "default"

# What the job's accelerators are called in a message: TPU chips for a TPU job (a JobSet of
# TPU slices, Ray use_tpu), else GPUs.
tpu if input.resources.accelerator == "tpu"

unit := "TPU chip" if tpu
else := "GPU"

# The accelerator's family, as in "TPU spend", "TPU type unknown".
family := "TPU" if tpu
else := "GPU"
