"""A config mistake is reported as ruff reports one: the file, the line and column of the
entry, what is wrong, and for a misspelt key the valid key it was meant to be."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.config import find_config
from trainlint.errors import ConfigError


def problems(folder: Path) -> list[str]:
    with pytest.raises(ConfigError) as error:
        find_config(folder)
    return str(error.value).splitlines()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".trainlint.toml", 'extend-selct = ["TL2"]\n'),
        (".trainlint.yaml", "extend-selct: [TL2]\n"),
        ("pyproject.toml", '[tool.trainlint]\nextend-selct = ["TL2"]\n'),
    ],
)
def test_a_misspelt_key_names_its_line_and_the_key_meant(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text)
    line = text.count("\n")
    assert problems(tmp_path) == [
        f"{tmp_path / name}:{line}:1: extend-selct: unknown key (did you mean 'extend-select'?)"
    ]


def test_every_problem_is_reported_at_its_own_entry_in_file_order(tmp_path: Path) -> None:
    """Keys inside a waiver and a pack get their model's keys as suggestions; a bad value is
    reported at the value, a missing key at the entry that lacks it."""
    (tmp_path / ".trainlint.yaml").write_text(
        "fail-on: warnings\n"
        "waivers:\n"
        "  - rule: TL201\n"
        "    reasn: the saves are cheap\n"
        "packs:\n"
        "  - paht: org-pack\n"
        "zzz: 1\n"
    )
    config = tmp_path / ".trainlint.yaml"
    assert problems(tmp_path) == [
        f"{config}:1:10: fail-on: Input should be 'error', 'warning' or 'info'",
        f"{config}:3:5: waivers.0.reason: Field required",
        f"{config}:4:5: waivers.0.reasn: unknown key (did you mean 'reason'?)",
        f"{config}:6:5: packs.0.paht: unknown key (did you mean 'path'?)",
        f"{config}:7:1: zzz: unknown key",
    ]


def test_a_problem_in_an_extended_base_names_the_base(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text('select = ["TL"]\nignroe = ["TL3"]\n')
    (tmp_path / ".trainlint.toml").write_text('extend = "base.toml"\n')
    assert problems(tmp_path) == [
        f"{tmp_path / 'base.toml'}:2:1: ignroe: unknown key (did you mean 'ignore'?)"
    ]
