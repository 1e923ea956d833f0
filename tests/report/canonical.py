"""The one canonical report every reporter's golden file is rendered from.

It is a real run over the bundled examples with a repo config that waives one finding (so a
suppressed finding is present) and a fixed date, copied to a temporary folder so paths are
stable: ``examples/...`` relative to the working directory.
"""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from trainlint.findings import Finding
from trainlint.lint import CheckOptions, check
from trainlint.packs import RuleMeta, load_builtin_pack
from trainlint.results import Report

CONFIG = """\
[[waivers]]
rule = "TL302"
path = "examples/llama3-sft/*"
reason = "NCCL traces for the interconnect ticket"
approved_by = "platform-team"
expires = 2027-01-31
"""


def canonical_report(root: Path, monkeypatch: pytest.MonkeyPatch) -> Report:
    """Copy the job examples under ``root``, chdir there and check them."""
    for name in ("llama3-sft", "gpt2-finetune"):
        shutil.copytree(EXAMPLES / name, root / "examples" / name)
    (root / ".trainlint.toml").write_text(CONFIG)
    monkeypatch.chdir(root)
    return check([Path("examples")], CheckOptions(today=datetime.date(2026, 11, 29)))


def builtin_rule(rule_id: str) -> RuleMeta:
    rule = load_builtin_pack().get_rule(rule_id)
    assert rule is not None
    return rule


def finding(**changes: Any) -> Finding:
    """A hand-made TL201 finding, for reporter tests that need one odd field."""
    values: dict[str, Any] = {
        "rule": "TL201", "name": "checkpoint-too-frequent", "severity": "warning",
        "message": "checkpoint every 10 steps", "file": "jobs/train.yaml", "line": 12,
        "column": 3, "job": "jobs/train.yaml", "fingerprint": "d88f4c3d28f9aa68",
    }  # fmt: skip
    return Finding(**{**values, **changes})
