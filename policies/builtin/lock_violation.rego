# METADATA
# title: lock-violation
# description: |
#   Reports every attempt to loosen something an org pack locked: a repo config parameter (or a
#   later pack's) beyond a locked threshold, a locked rule ignored or deselected in the config, a
#   locked rule's finding suppressed inline, by per-file-ignores or a baseline, or waived without
#   one of the approvers the pack lists. The loosening is not applied; the message names the lock,
#   the pack that set it and what was tried. It is evaluated after every other rule, on the
#   violations the layering and suppression passes found.
# related_resources:
#   - ref: https://www.openpolicyagent.org/docs/latest/management-bundles/
#     description: OPA bundles, the format org packs are distributed in
# custom:
#   id: TL906
#   severity: error
#   category: governance
#   why: |
#     A platform team locks a threshold or a rule because the waste it guards against is paid by
#     the whole organisation: a missing cost tag hides whose bill a run is, a checkpoint every few
#     steps idles a cluster. If a repository could quietly raise the threshold or ignore the rule,
#     the org-wide policy would hold only where nobody minded it. Reporting the attempt, and not
#     applying it, keeps the policy honest and shows the team where an exception is wanted.
#   example: |
#     # .trainlint.toml
#     [params.checkpoint-too-frequent]
#     max_overhead_fraction = 0.5   # the org pack locks 0.05 as a maximum
#   fix: |
#     # .trainlint.toml
#     [params.checkpoint-too-frequent]
#     max_overhead_fraction = 0.02  # tightening a lock is always allowed
#   remediation: |
#     Remove the loosening setting, or tighten instead. For a genuine exception, add a waiver with
#     a reason, an expiry and an `approved_by` from the approvers the pack lists for the rule
#     (`trainlint pack inspect` shows the locks), or ask the platform team to change the pack.
package trainlint.rules.lock_violation

import rego.v1

findings contains finding if {
	some i, violation in input.lock_violations
	is_string(violation.lock)
	is_string(violation.pack)
	is_string(violation.detail)
	finding := {
		"message": concat("", [
			_who(violation), " loosens ", violation.lock, ", locked by pack '", violation.pack,
			"': ", violation.detail, " (not applied)",
		]),
		"pointer": concat("/", ["", "lock_violations", format_int(i, 10)]),
	}
}

_who(violation) := violation.where if is_string(violation.where)

else := "a setting"
