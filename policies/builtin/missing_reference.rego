# METADATA
# title: missing-reference
# description: |
#   A file the job references (--deepspeed ds.json, --config_file acc.yaml, deepspeed: in a
#   config) does not exist, so the launch would fail at start-up or silently run without the
#   settings that file was meant to bring. The finding names the missing path at the line of
#   the reference; paths are tried from the referring file's folder up to the checked root.
# custom:
#   id: TL904
#   severity: error
#   category: input
#   remediation: |
#     Fix the path, or add the missing file to the repository.
package trainlint.rules.missing_reference

import rego.v1

findings contains finding if {
	some i, item in input.missing_references
	is_string(item.path)
	is_string(item.file)
	finding := {
		"message": concat("", ["referenced file '", item.path, "' does not exist (referenced from ", item.file, ")"]),
		"pointer": sprintf("/missing_references/%d", [i]),
	}
}
