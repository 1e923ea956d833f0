# METADATA
# title: debug-logging
# description: |
#   Debug logging left on in a production run: NCCL_DEBUG=INFO/TRACE logs every collective on
#   every rank, TORCH_DISTRIBUTED_DEBUG=DETAIL adds consistency checks around every
#   collective, TORCH_CPP_LOG_LEVEL=INFO and a debug log level flood the logs. They slow every
#   step and bury real errors. One finding per offending setting; the variables, their values
#   and the log levels are pack parameters. The cost is an assumed overhead fraction of the
#   run (overhead_fraction), labelled as assumed.
# custom:
#   id: TL302
#   severity: warning
#   category: logging
#   remediation: |
#     Unset the debug variables (or use NCCL_DEBUG=WARN, TORCH_DISTRIBUTED_DEBUG=OFF) and log
#     at info level; turn debug output on only while reproducing a problem.
package trainlint.rules.debug_logging

import rego.v1

import data.trainlint.lib.fmt

params := data.trainlint.params.debug_logging

# Function names are unique in the pack: regopy 1.5 fails or crashes when two packages define
# functions of the same name with different arities (see trainlint/engine/regopy_backend.py).

findings contains finding if {
	some name, levels in params.env
	value := input.env[name]
	is_string(value)
	some level in levels
	upper(value) == upper(level)
	setting := concat("", [name, "=", value])
	finding := object.union(
		{"message": _debug_message(setting, concat("", ["unset ", name])), "pointer": concat("", ["/env/", name])},
		_waste,
	)
}

findings contains finding if {
	value := input.logging.level
	is_string(value)
	some level in params.log_levels
	lower(value) == lower(level)
	setting := concat("", ["log level '", value, "'"])
	finding := object.union({"message": _debug_message(setting, "log at info level"), "pointer": "/logging/level"}, _waste)
}

_debug_message(setting, fix) := concat("", [
	setting, " turns on debug logging: ~", fmt.pct(params.overhead_fraction),
	" of the run (assumed); ", fix, " outside debugging",
])


_gpu_hours := params.overhead_fraction * input.estimates.run.gpu_hours if {
	is_number(input.estimates.run.gpu_hours)
}

_usd := params.overhead_fraction * input.estimates.run.usd if {
	is_number(input.estimates.run.usd)
	is_number(_gpu_hours)
}

_waste := {"waste": {"gpu_hours": _gpu_hours, "usd": _usd}} if is_number(_usd)
else := {}
