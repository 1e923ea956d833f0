"""Repository config: the closest file wins, unknown keys name themselves, formats can be forced."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.config import find_config
from trainlint.errors import ConfigError
from trainlint.lint import load_jobs


def test_closest_config_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.trainlint]\nformats = {"*.yaml" = "hf-trainer"}\n'
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".trainlint.yaml").write_text("formats: {'x/*.json': deepspeed}\n")
    assert find_config(tmp_path / "sub").formats == {"x/*.json": "deepspeed"}
    assert find_config(tmp_path).formats == {"*.yaml": "hf-trainer"}


def test_pyproject_without_a_trainlint_table_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_config(tmp_path).formats == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("format: {}\n", "format: Extra inputs are not permitted"),
        ("formats: {'*.yaml': nosuchformat}\n", "unknown format 'nosuchformat'"),
        ("- a\n", "must be a mapping"),
    ],
)
def test_bad_config_is_a_config_error_naming_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / ".trainlint.yaml").write_text(text)
    with pytest.raises(ConfigError, match=message) as error:
        find_config(tmp_path)
    assert ".trainlint.yaml" in str(error.value)


def test_a_forced_format_reads_an_ambiguous_file(in_tmp: Path) -> None:
    (in_tmp / "knobs.yaml").write_text("learning_rate: 1e-4\nsave_steps: 7\n")
    (in_tmp / "other.yaml").write_text("learning_rate: 1e-4\n")
    (in_tmp / ".trainlint.yaml").write_text("formats: {'other.yaml': hf-trainer}\n")
    jobs = {job.id: job for job in load_jobs([Path(".")])}
    assert jobs["knobs.yaml"].checkpoint.every_steps == 7  # recognised by content
    assert jobs["other.yaml"].sources[0].format == "hf-trainer"  # only because it was forced


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just a string\n"])
def test_forcing_a_format_on_a_non_mapping_is_a_parse_error(in_tmp: Path, text: str) -> None:
    (in_tmp / "odd.yaml").write_text(text)
    (in_tmp / ".trainlint.yaml").write_text("formats: {'*.yaml': torchtune}\n")
    job = load_jobs([Path(".")])[0]
    assert job.parse_errors[0].message.startswith("not a torchtune config")
