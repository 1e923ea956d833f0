"""The server's features as functions of a real check: the overlay of unsaved buffers,
hovers, and the code actions' edits applied and checked again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from tests.conftest import EXAMPLES
from trainlint.discover import resolved
from trainlint.findings import Fix, TextEdit
from trainlint.lint import CheckOptions, check
from trainlint.server import features
from trainlint.server.session import Session


@pytest.fixture
def work(in_tmp: Path) -> Path:
    """A copy of examples/llama3-sft to edit, checked from its own folder."""
    folder = in_tmp / "job"
    shutil.copytree(EXAMPLES / "llama3-sft", folder)
    return folder


def _session(work: Path, buffers: dict[str, str] | None = None) -> Session:
    """A session on ``work`` with ``buffers`` (relative path: text) open, checked once."""
    session = Session(folders=[resolved(work)])
    for name, text in (buffers or {}).items():
        session.open(work / name, text)
    session.check()
    return session


def _codes(session: Session, path: Path) -> set[str]:
    return {finding.rule for finding in session.findings(path)}


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """A document after LSP text edits (applied from the last, as a client does)."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
    for edit in reversed(ordered):
        start = offsets[edit.range.start.line] + edit.range.start.character
        end = offsets[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


def test_check_reads_the_overlay_in_place_of_the_file(work: Path) -> None:
    """lint.check with an overlay judges the job by the buffer's text, the disk untouched."""
    config = work / "configs" / "sft.yaml"
    edited = config.read_text().replace("logging_steps: 1\n", "logging_steps: 50\n")
    before = check([work])
    after = check([work], CheckOptions(overlay={resolved(config): edited}))
    assert "TL301" in {f.rule for f in before.findings}
    assert "TL301" not in {f.rule for f in after.findings}
    assert "logging_steps: 1\n" in config.read_text()


def test_a_flag_in_the_launch_script_is_judged_with_the_unsaved_config(work: Path) -> None:
    """TL201 in the script weighs its --save_steps against the run length of the config the
    script names: with an unsaved max_steps of 5, saving every 10 steps costs nothing."""
    script = work / "train.slurm"
    config = (work / "configs" / "sft.yaml").read_text()
    plain = _session(work)
    short = _session(work, {"configs/sft.yaml": config.replace("max_steps: 2000", "max_steps: 5")})
    assert "TL201" in _codes(plain, script)
    assert "TL201" not in _codes(short, script)  # a 5-step run never reaches a save


def test_suppress_action_writes_an_ignore_the_check_honours(work: Path) -> None:
    """The suppress edit, applied to the buffer, silences the finding with its reason; the
    TL302 line gains a comment and nothing else changes."""
    script = work / "train.slurm"
    session = _session(work)
    text = session.text(script)
    nccl = next(f for f in session.findings(script) if f.rule == "TL302")
    action = features.suppress_action(nccl, script, text.splitlines())
    assert action is not None and action.edit is not None and action.edit.changes is not None
    (edits,) = action.edit.changes.values()
    fixed = apply(text, list(edits))
    assert fixed.splitlines()[nccl.line - 1] == (
        f"export NCCL_DEBUG=INFO  # trainlint: ignore[TL302] {features.REASON_PLACEHOLDER}"
    )
    session.open(script, fixed)
    session.check()
    assert "TL302" not in _codes(session, script)
    suppressed = [f for f in session.report.findings if f.rule == "TL302"]  # type: ignore[union-attr]
    assert suppressed[0].suppression is not None
    assert suppressed[0].suppression.reason == features.REASON_PLACEHOLDER


def test_suppress_action_adds_the_rule_to_an_ignore_on_the_line(work: Path) -> None:
    script = work / "train.slurm"
    text = (work / "train.slurm").read_text()
    text = text.replace(
        "export NCCL_DEBUG=INFO", "export NCCL_DEBUG=INFO  # trainlint: ignore[TL999] x"
    )
    session = _session(work, {"train.slurm": text})
    nccl = next(f for f in session.findings(script) if f.rule == "TL302")
    action = features.suppress_action(nccl, script, text.splitlines())
    assert action is not None and action.edit is not None and action.edit.changes is not None
    (edits,) = action.edit.changes.values()
    assert apply(text, list(edits)).splitlines()[nccl.line - 1].endswith("ignore[TL999,TL302] x")


def test_no_suppress_action_where_a_comment_would_break_the_file(work: Path) -> None:
    """A line continued with a backslash (the comment would end the command) and JSON (no
    comments) get no inline ignore."""
    session = _session(work)
    script = work / "train.slurm"
    saves = next(f for f in session.findings(script) if f.rule == "TL201")
    lines = session.text(script).splitlines()
    assert lines[saves.line - 1].endswith("\\")
    assert features.suppress_action(saves, script, lines) is None
    as_json = work / "configs" / "ds_zero3.json"
    assert features.suppress_action(saves, as_json, lines) is None


def test_a_findings_fix_becomes_a_quick_fix(work: Path) -> None:
    session = _session(work)
    config = work / "configs" / "sft.yaml"
    logging = next(f for f in session.findings(config) if f.rule == "TL301")
    edit = TextEdit(logging.file, 17, 16, 17, 17, "50")
    fixed = logging.model_copy(update={"fix": Fix("log every 50 steps", True, (edit,))})
    (action,) = features.fix_actions(session, fixed)
    assert action.is_preferred and action.title == "TL301: log every 50 steps"
    assert action.edit is not None and action.edit.changes is not None
    (edits,) = action.edit.changes[resolved(config).as_uri()]
    assert "logging_steps: 50\n" in apply(config.read_text(), [edits])
    unsafe = logging.model_copy(update={"fix": Fix("fewer GPUs", False, (edit,))})
    (action,) = features.fix_actions(session, unsafe)
    assert not action.is_preferred and "unsafe" in action.title
    assert features.fix_actions(session, logging.model_copy(update={"fix": None})) == []


def test_hover_on_a_key_shows_its_value_its_origin_and_the_rule(work: Path) -> None:
    session = _session(work)
    config = work / "configs" / "sft.yaml"
    text = features.hover(session, config, 17, 3)
    assert text is not None
    assert "`/logging/every_steps` = `1.0` in job `job/train.slurm`: stated at" in text
    assert "job/configs/sft.yaml:17:1 (read as hf-trainer)" in text
    assert "**TL301**" in text and "#### What it does" in text


def test_hover_on_the_gpu_line_shows_estimates_with_ranges(work: Path) -> None:
    session = _session(work)
    text = features.hover(session, work / "train.slurm", 4, 10)
    assert text is not None
    assert '`/resources/gpu/model` = `"H100-SXM"`' in text
    estimates = text.split("**Estimates for")[1]
    for label in ("memory per GPU", "step time", "$ per run"):
        assert label in estimates
    assert "\N{EN DASH}" in estimates  # the ranges
    assert features.hover(session, work / "train.slurm", 9, 0) is None  # set -euo pipefail


def test_diagnostics_span_the_token_and_link_the_rule_docs(work: Path) -> None:
    session = _session(work)
    script = work / "train.slurm"
    report = session.report
    assert report is not None
    found = features.diagnostics(session.findings(script), session.text(script), report.rules)
    nccl = next(d for d in found if d.code == "TL302")
    assert (nccl.range.start.character, nccl.range.end.character) == (7, 22)
    assert nccl.severity == types.DiagnosticSeverity.Warning
    assert nccl.code_description is not None
    assert nccl.code_description.href == (
        "https://github.com/trainlint/trainlint/blob/main/docs/rules.md#debug-logging-tl302"
    )
