# METADATA
# title: parse-error
# description: |
#   Fires when a job's file cannot be read or parsed (YAML, JSON, TOML, Python, shell), or
#   when a trainlint annotation in it names an unknown key or an invalid value. The finding
#   points at the line and column the parser stopped on; annotations are `x-trainlint:` blocks
#   and `# trainlint:` comments. The run goes on with the other files; every fact the broken
#   file would have set stays unknown.
# related_resources:
#   - ref: https://yaml.org/spec/1.2.2/
#     description: YAML 1.2.2 specification
#   - ref: https://www.rfc-editor.org/rfc/rfc8259
#     description: RFC 8259, the JSON data interchange format (no trailing commas, no comments)
#   - ref: https://toml.io/en/v1.0.0
#     description: TOML v1.0.0 specification
# custom:
#   id: TL901
#   severity: error
#   category: input
#   why: |
#     A config that does not parse fails the job at start-up, after it has waited in the queue
#     and the nodes are allocated, or, when the framework tolerates it, runs without the
#     settings it was meant to bring. Either way every fact the file would have given trainlint
#     is unknown, so the other rules stay silent about it: a clean report would be a false
#     all-clear. A mistyped trainlint annotation is an error for the same reason: it exists
#     only for trainlint and would otherwise be silently ignored.
#   example: |
#     # ds_config.json
#     {
#       "train_micro_batch_size_per_gpu": 4,
#       "zero_optimization": {
#         "stage": 2,
#       }
#     }
#   fix: |
#     # ds_config.json
#     {
#       "train_micro_batch_size_per_gpu": 4,
#       "zero_optimization": {
#         "stage": 2
#       }
#     }
#   remediation: |
#     Fix the syntax error, or exclude the file in the trainlint config if it is not part of a
#     training job.
package trainlint.rules.parse_error

import rego.v1

findings contains finding if {
	some i, parse_error in input.parse_errors
	is_string(parse_error.message)
	finding := {"message": parse_error.message, "pointer": sprintf("/parse_errors/%d", [i])}
}
