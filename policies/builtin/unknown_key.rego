# METADATA
# title: unknown-key
# description: |
#   A key the recognised format does not know, one or two edits from one it does (save_step,
#   loging_steps): the framework silently ignores it and keeps its default, so the setting the
#   author meant never takes effect. (A mistake in trainlint's own annotations is a TL901
#   error instead: an annotation exists only for trainlint.)
# custom:
#   id: TL903
#   severity: warning
#   category: input
#   remediation: |
#     Rename the key to the one suggested, or remove it.
package trainlint.rules.unknown_key

import rego.v1

findings contains finding if {
	some i, item in input.unknown_keys
	is_string(item.key)
	is_string(item.format)
	finding := {
		"message": concat("", [
			"unknown ", item.format, " key '", item.key, "'", _hint(item),
			"; it is ignored, so its default applies",
		]),
		"pointer": sprintf("/unknown_keys/%d", [i]),
	}
}

# Function names are unique in the pack (regopy 1.5: see trainlint/engine/regopy_backend.py).
_hint(item) := concat("", [": did you mean '", item.suggestion, "'?"]) if {
	is_string(item.suggestion)
} else := ""
