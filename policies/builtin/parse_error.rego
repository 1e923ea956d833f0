# METADATA
# title: parse-error
# description: |
#   A file that belongs to the job could not be read or parsed, so every fact it would have
#   set is unknown and other rules may stay silent about it; or a trainlint annotation in it
#   (x-trainlint:, # trainlint:) names an unknown key or an invalid value. The run goes on
#   with the other files; this finding points at the line the parser stopped on.
# custom:
#   id: TL901
#   severity: error
#   category: input
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
