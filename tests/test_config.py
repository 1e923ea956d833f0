"""Repository config: the closest file wins, unknown keys name themselves, formats can be forced."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from trainlint.cli import main
from trainlint.config import Configs, RepoConfig, find_config, load_config, project_root, run_config
from trainlint.discover import resolved
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
        ("format: {}\n", "format: unknown key"),
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


def test_a_nested_configs_formats_apply_to_its_files_when_checking_from_the_root(
    in_tmp: Path,
) -> None:
    """Each file's formats come from its closest config, not the first path's."""
    (in_tmp / "team").mkdir()
    (in_tmp / "team" / "other.yaml").write_text("learning_rate: 1e-4\n")
    (in_tmp / "team" / ".trainlint.yaml").write_text("formats: {'other.yaml': hf-trainer}\n")
    (in_tmp / ".trainlint.yaml").write_text("{}\n")
    jobs = {job.id: job for job in load_jobs([Path(".")])}
    assert jobs["team/other.yaml"].sources[0].format == "hf-trainer"


def test_config_file_follows_its_extend_chain(in_tmp: Path) -> None:
    (in_tmp / "base.toml").write_text('ignore = ["TL301"]\n')
    (in_tmp / "ci.toml").write_text('extend = "base.toml"\nfail-on = "error"\n')
    config = load_config(Path("ci.toml"))
    assert (config.ignore, config.fail_on, config.source) == (
        ["TL301"],
        "error",
        in_tmp / "ci.toml",
    )


def test_config_file_must_hold_a_trainlint_config(in_tmp: Path) -> None:
    (in_tmp / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with pytest.raises(ConfigError, match=r"no \[tool.trainlint\] table in pyproject.toml"):
        load_config(Path("pyproject.toml"))
    with pytest.raises(ConfigError, match="no such file"):
        load_config(in_tmp)  # a folder is no config file


def test_config_file_cannot_be_combined_with_diff(in_tmp: Path) -> None:
    (in_tmp / "ci.toml").write_text("")
    result = CliRunner().invoke(main, ["check", ".", "--config", "ci.toml", "--diff", "main"])
    assert result.exit_code == 2
    assert "--config cannot be combined with --diff" in result.output


def test_the_root_outside_git_without_a_config_is_the_current_folder(in_tmp: Path) -> None:
    (in_tmp / "a").mkdir()
    assert project_root([Path("a")], run_config([Path("a")])) == in_tmp
    (in_tmp / "a" / ".trainlint.toml").write_text("")
    assert project_root([Path("a")], run_config([Path("a")])) == in_tmp / "a"


@pytest.mark.parametrize("text", ["", "- a\n- b\n", "just a string\n"])
def test_forcing_a_format_on_a_non_mapping_is_a_parse_error(in_tmp: Path, text: str) -> None:
    (in_tmp / "odd.yaml").write_text(text)
    (in_tmp / ".trainlint.yaml").write_text("formats: {'*.yaml': torchtune}\n")
    job = load_jobs([Path(".")])[0]
    assert job.parse_errors[0].message.startswith("not a torchtune config")


def test_ruff_spelling_and_snake_case_are_both_accepted(tmp_path: Path) -> None:
    (tmp_path / ".trainlint.toml").write_text(
        'extend-select = ["TL3"]\nfail-on = "error"\n[per-file-ignores]\n"a/*" = ["TL201"]\n'
    )
    config = find_config(tmp_path)
    assert (config.extend_select, config.fail_on) == (["TL3"], "error")
    assert config.per_file_ignores == {"a/*": ["TL201"]}
    (tmp_path / ".trainlint.toml").write_text('extend_select = ["TL3"]\n')
    assert find_config(tmp_path).extend_select == ["TL3"]


def test_extend_inherits_and_the_extending_file_wins(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # the repository holds both files: extend stays inside it
    (tmp_path / "base.toml").write_text(
        'ignore = ["TL301"]\nfail-on = "info"\n'
        "[params.checkpoint-too-frequent]\nmax_overhead_fraction = 0.1\n"
        "[params.estimate]\nmfu = 0.3\n"
    )
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".trainlint.toml").write_text(
        'extend = "../base.toml"\nfail-on = "error"\n[params.estimate]\nmfu = 0.5\n'
    )
    config = find_config(tmp_path / "repo")
    assert (config.ignore, config.fail_on) == (["TL301"], "error")
    assert config.params == {
        "checkpoint-too-frequent": {"max_overhead_fraction": 0.1},
        "estimate": {"mfu": 0.5},
    }


def test_extend_loop_and_missing_base_are_errors(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('extend = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extend = "a.toml"\n')
    (tmp_path / ".trainlint.toml").write_text('extend = "a.toml"\n')
    with pytest.raises(ConfigError, match="loop"):
        find_config(tmp_path)
    (tmp_path / ".trainlint.toml").write_text('extend = "nope.toml"\n')
    with pytest.raises(ConfigError, match=r"'nope\.toml' is not a trainlint config"):
        find_config(tmp_path)


def test_repo_params_reach_the_estimator(tmp_path: Path) -> None:
    from tests.conftest import EXAMPLES
    from trainlint.config import find_config as closest

    table = load_jobs([EXAMPLES / "llama3-sft"])[0].estimates.step_time_s
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".trainlint.toml").write_text("[params.estimate]\nmfu = 0.4\n")
    (tmp_path / ".trainlint.toml").write_text("[params.estimate]\nmfu = 0.2\n")
    default = load_jobs([EXAMPLES / "llama3-sft"], config=closest(tmp_path / "a"))[0]
    slower = load_jobs([EXAMPLES / "llama3-sft"], config=closest(tmp_path))[0]
    step = default.estimates.step_time_s
    assert step and table != step  # the org's mfu replaces the table's
    assert slower.estimates.step_time_s == pytest.approx(2 * step)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("[params.no-such-rule]\nx = 1\n", "no rule or parameter group 'no-such-rule'"),
        ("[params.TL201]\nmax_overhead = 1\n", "unknown parameter 'max_overhead'"),
        ('[params.estimate]\nmfu = "high"\n', "params.estimate.mfu: 'high' is not"),
    ],
)
def test_bad_params_name_the_key(tmp_path: Path, params: str, message: str) -> None:
    from tests.conftest import EXAMPLES
    from trainlint.lint import CheckOptions, check

    (tmp_path / ".trainlint.toml").write_text(params)
    with pytest.raises(ConfigError, match=message):
        check([EXAMPLES / "gpt2-finetune"], CheckOptions(config=find_config(tmp_path)))


def test_init_writes_a_starter_config_that_validates(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from trainlint.cli import main

    result = CliRunner().invoke(main, ["init", str(tmp_path)])
    assert result.exit_code == 0
    config = find_config(tmp_path)
    assert config.fail_on == "warning" and config.source == tmp_path / ".trainlint.toml"
    again = CliRunner().invoke(main, ["init", str(tmp_path)])
    assert again.exit_code == 2 and "--force" in again.output
    assert CliRunner().invoke(main, ["init", str(tmp_path), "--force"]).exit_code == 0


def test_entries_are_located_by_key_path_where_they_are_written(tmp_path: Path) -> None:
    """Each entry at the reader's position in the file that wrote it (a base's entry in the
    base, unless the extending file replaces the key), ruff's spelling for field names."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "base.yaml").write_text(
        "ignore: [TL201, TL202]\nwaivers:\n  - rule: TL302\n    reason: from the base\n"
        "    approved_by: platform-team\n"
    )
    (tmp_path / ".trainlint.toml").write_text(
        'extend = "base.yaml"\nignore = ["TL3"]\n[per_file_ignores]\n"src/*.yaml" = ["TL201"]\n'
    )
    located = {
        path: (written.file.name, written.line, written.column, written.value_column)
        for path, written in find_config(tmp_path).located.items()
    }
    assert located[("waivers", 0, "reason")] == ("base.yaml", 4, 5, 13)
    assert located[("waivers", 0, "approved-by")] == ("base.yaml", 5, 5, 18)
    assert located[("ignore", 0)] == (".trainlint.toml", 2, 12, 12)
    assert ("ignore", 1) not in located  # the base's list is replaced whole
    assert located[("per-file-ignores", "src/*.yaml")] == (".trainlint.toml", 4, 2, 2)


def test_a_relative_path_asked_again_from_another_folder_is_another_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file's config and real path are remembered by the path asked with and the working
    directory: the same relative name from another folder is another file (diff mode and the
    tests change folders within one process)."""
    for name, rule in (("a", "TL1"), ("b", "TL2")):
        (tmp_path / name / ".git").mkdir(parents=True)
        (tmp_path / name / ".trainlint.toml").write_text(f'select = ["{rule}"]\n')
        (tmp_path / name / "train.yaml").write_text("x: 1\n")
    configs = Configs(RepoConfig())
    seen = []
    for name in ("a", "b", "a"):
        monkeypatch.chdir(tmp_path / name)
        seen.append((configs.of("train.yaml").select, resolved(Path("train.yaml"))))
    assert seen == [
        (["TL1"], (tmp_path / "a" / "train.yaml").resolve()),
        (["TL2"], (tmp_path / "b" / "train.yaml").resolve()),
        (["TL1"], (tmp_path / "a" / "train.yaml").resolve()),
    ]
