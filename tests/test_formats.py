"""The format catalogue: every format describes itself, and docs/formats.md is current."""

from __future__ import annotations

from click.testing import CliRunner

from tests.conftest import REPO
from trainlint import cli
from trainlint.formats import catalogue, render_markdown


def test_every_format_describes_itself() -> None:
    for info in catalogue():
        assert info.summary, info.name
        assert info.examples, info.name
        assert info.keys, info.name
        assert info.role in {"entrypoint", "config", "deepspeed"}, info.name


def test_docs_formats_page_is_current() -> None:
    page = (REPO / "docs" / "formats.md").read_text()
    assert page == render_markdown(), "docs/formats.md is stale: run python -m trainlint.formats"


def test_formats_command_lists_every_format() -> None:
    output = CliRunner().invoke(cli.main, ["formats"]).output
    for info in catalogue():
        assert info.name in output
