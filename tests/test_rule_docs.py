"""Rule docs: `trainlint rule` in ruff's shape, and docs/rules.md generated and current."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from trainlint.cli import main
from trainlint.packs import load_builtin_pack
from trainlint.rule_docs import DOCS, SECTIONS, render_catalog, render_rule, rule_params

PACK = load_builtin_pack()


def test_docs_rules_md_is_current() -> None:
    assert DOCS.read_text() == render_catalog(PACK), "run: python -m trainlint.rule_docs"


@pytest.mark.parametrize("rule", PACK.rules, ids=lambda rule: rule.id)
def test_every_rule_page_has_every_section(rule: object) -> None:
    from trainlint.packs import RuleMeta

    assert isinstance(rule, RuleMeta)
    page = render_rule(rule, rule_params(rule, PACK))
    for section in SECTIONS:
        assert f"## {section}\n" in page, (rule.id, section)
    assert "(not documented)" not in page, f"{rule.id}: METADATA lacks why, example or fix"


def test_rule_command_prints_one_rule_by_id_or_slug() -> None:
    by_id = CliRunner().invoke(main, ["rule", "TL201"])
    by_slug = CliRunner().invoke(main, ["rule", "checkpoint-too-frequent"])
    assert by_id.exit_code == 0 and by_id.output == by_slug.output
    assert by_id.output.startswith("# checkpoint-too-frequent (TL201)\n")
    assert "## Why is this bad?" in by_id.output
    assert "- `max_overhead_fraction` = `0.05`" in by_id.output


def test_rule_command_shows_options_set_in_the_repo_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".trainlint.toml").write_text(
        "[params.checkpoint-too-frequent]\nmax_overhead_fraction = 0.1\n"
    )
    result = CliRunner().invoke(main, ["rule", "TL201"])
    assert "- `max_overhead_fraction` = `0.1`" in result.output


def test_unknown_rule_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["rule", "TL999"])
    assert result.exit_code == 2 and "unknown rule 'TL999'" in result.output
