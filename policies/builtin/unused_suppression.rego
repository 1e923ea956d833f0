# METADATA
# title: unused-suppression
# description: |
#   Reports suppressions that do not do what they say: an inline `# trainlint: ignore[...]`
#   comment, waiver or baseline entry that matches no finding, is malformed or has expired.
#   Unused means it matches no finding of a rule that ran; malformed means no rule list or an
#   unknown rule; a waiver past its `expires` date stops suppressing that day. It is evaluated
#   after every other rule, on the problems the suppression pass found; `report` chooses which
#   kinds of problem count.
# related_resources:
#   - ref: https://docs.astral.sh/ruff/rules/unused-noqa/
#     description: ruff RUF100, the same check for noqa comments
# custom:
#   id: TL905
#   severity: warning
#   category: governance
#   why: |
#     A suppression that suppresses nothing is a promise nobody keeps: when the waste it once
#     excused comes back (a revert, a copied config), it is silenced again without review. A
#     misspelt rule id silences nothing while the reader believes the finding was accepted,
#     and an expired waiver means the time the team gave itself to fix the waste is over.
#   example: |
#     # train.yaml
#     save_steps: 2000  # trainlint: ignore[TL201] saves were every 10 steps once
#   fix: |
#     # train.yaml
#     save_steps: 2000
#   remediation: |
#     Delete the stale comment, waiver or baseline entry (rewrite a baseline with
#     `trainlint check --write-baseline FILE`), correct the rule id, or renew an expired waiver
#     after a new review.
package trainlint.rules.unused_suppression

import rego.v1

params := data.trainlint.params.unused_suppression

findings contains finding if {
	some i, problem in input.suppression_problems
	is_string(problem.detail)
	problem.problem in params.report
	finding := {
		"message": concat("", [_label[problem.problem], " ", _kind[problem.kind], ": ", problem.detail]),
		"pointer": concat("/", ["", "suppression_problems", format_int(i, 10)]),
	}
}

_label := {"unused": "unused", "malformed": "malformed", "expired": "expired"}

_kind := {"inline": "inline ignore", "waiver": "waiver", "baseline": "baseline entry"}
