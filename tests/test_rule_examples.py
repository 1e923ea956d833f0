"""Each rule does what its documentation says: its METADATA example fires it, its fix does not.

The example and the fix (``trainlint rule TL201``'s "Example" and "Use instead") are written
as files, ``# name.ext`` opening each, into an empty folder, and checked with every rule,
exactly as a user would copy them. A rule whose example or fix needs more than files (a probe
measurement, an org pack) is listed in ``NEEDS_MORE`` / ``FIX_NEEDS_MORE`` with what it needs;
its YAML cases (tests/rules/cases) run it end to end instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trainlint.lint import check
from trainlint.packs import RuleMeta, load_builtin_pack
from trainlint.workdir import working_directory

PACK = load_builtin_pack()
NEEDS_MORE = {
    "TL902": "a probe measurement taken on another configuration (.trainlint/measurements)",
    "TL906": "an org pack that locks the parameter the repo config loosens",
    "TL406": "the org's scan database holding the same experiment (tests/scans)",
    "TL407": "the org's scan database and a pack with team budgets (tests/scans)",
}
FIX_NEEDS_MORE = {"TL103": "a fresh probe measurement at the job's world size"}
_HEADER = re.compile(r"^# ([\w./-]+\.(?:sh|slurm|sbatch|ya?ml|json|toml|py))\b")


def files_of(text: str) -> dict[str, str]:
    """The files a documented example shows: each opens with a ``# name.ext`` line."""
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header is not None:
            current = files.setdefault(header.group(1), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) + "\n" for name, lines in files.items()}


def findings_of(rule: RuleMeta, text: str, folder: Path) -> list[str]:
    for name, content in files_of(text).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
    with working_directory(folder):
        report = check([Path(".")])
    return [
        f"{f.file}:{f.line}: {f.message}"
        for f in report.findings
        if f.rule == rule.id and f.suppression is None
    ]


CHECKED = [rule for rule in PACK.rules if rule.id not in NEEDS_MORE]


@pytest.mark.parametrize("rule", CHECKED, ids=lambda rule: rule.id)
def test_the_documented_example_fires(rule: RuleMeta, tmp_path: Path) -> None:
    assert files_of(rule.example), f"{rule.id}: the example names no file (# name.ext)"
    assert findings_of(rule, rule.example, tmp_path), f"{rule.id}: its example does not fire"


@pytest.mark.parametrize(
    "rule", [r for r in CHECKED if r.id not in FIX_NEEDS_MORE], ids=lambda rule: rule.id
)
def test_the_documented_fix_is_quiet(rule: RuleMeta, tmp_path: Path) -> None:
    assert files_of(rule.fix), f"{rule.id}: the fix names no file (# name.ext)"
    assert findings_of(rule, rule.fix, tmp_path) == [], f"{rule.id}: its fix still fires"


def test_every_rule_is_checked_or_says_what_it_needs() -> None:
    assert {*NEEDS_MORE, *FIX_NEEDS_MORE} <= {rule.id for rule in PACK.rules}
