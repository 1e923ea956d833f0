# METADATA
# title: stale-measurement
# description: |
#   Fires when the job's probe measurement (.trainlint/measurements/<job>.json) was taken on a
#   different configuration (measurements.fresh is false). The probe records a fingerprint of
#   the job's performance-relevant fields (model dimensions, micro-batch, sequence length,
#   precision, optimizer, parallelism, recomputation, world size, GPU model), and it no longer
#   matches. The message names the changed fields when the probe recorded them and points at
#   the first one; the measured figures are ignored and the rules fall back to estimates.
# related_resources:
#   - ref: https://pytorch.org/docs/stable/elastic/run.html
#     description: torchrun, the launcher `trainlint probe` uses to measure each world size
# custom:
#   id: TL902
#   severity: warning
#   category: reliability
#   why: |
#     Step time, peak memory and scaling efficiency depend on exactly the fields the
#     fingerprint covers: doubling the micro-batch or moving from 8 to 16 GPUs changes all
#     three. A measurement of the old configuration would silently vouch for the new one,
#     so trainlint ignores it; until the job is measured again its cost and fit are only
#     estimated and TL103 treats the job as unmeasured.
#   example: |
#     # train.yaml: per_device_train_batch_size was 8 when the probe ran
#     per_device_train_batch_size: 16
#   fix: |
#     # re-measure after changing the job:
#     #   trainlint probe train.yaml --world-sizes 1,8
#     per_device_train_batch_size: 16
#   remediation: |
#     Re-run `trainlint probe <entry file>` after changing the job (it rewrites the
#     measurement), or delete the stale file under .trainlint/measurements/ if the job is
#     not to be measured again.
package trainlint.rules.stale_measurement

import rego.v1

import data.trainlint.lib.job

# Helpers are rules, not functions: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).
# Querying data.trainlint.rules evaluates every rule of the package, so a helper that could
# meet a null (an error in regorus) is guarded by _applies.

findings contains {"message": _message, "pointer": _pointer} if _applies

_m := input.measurements

_applies if _m.fresh == false

_message := concat("", [
	"the probe measurement ", _path, _when, " no longer matches the job", _changed,
	"; its figures are ignored until it is measured again: `trainlint probe ", _entry,
	" --world-sizes ", _sizes, "`",
]) if _applies

_path := _m.path if is_string(_m.path)
else := "of this job"

_when := concat("", [" (", _m.measured_at, ")"]) if is_string(_m.measured_at)
else := ""

_names := [trim_left(replace(p, "/", "."), ".") |
	some p in _m.changed
	is_string(p)
]

_changed := concat("", [": ", concat(", ", _names), " changed"]) if {
	count(_names) > 0
} else := ""

_entry := input.id if is_string(input.id)
else := "<entry file>"

# Probe the job as it is now: one GPU and its current world size.
_sizes := concat("", ["1,", format_int(job.world_size, 10)]) if {
	is_number(job.world_size)
	job.world_size > 1
} else := "1"

# The first changed field the job locates, else the measurement file itself.
_located := [p |
	some p in _m.changed
	is_string(p)
	is_object(input.provenance[p])
]

_pointer := _located[0] if {
	count(_located) > 0
} else := "/measurements"
