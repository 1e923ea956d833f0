"""Paths relative to the project root, per-file configs and order-independent runs (issue 17,
items 3 and 4), on a real git repository built by each test: a launch script under
``scripts/`` naming configs under ``configs/``, and ``small/``, a job with its own config."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLES
from tests.fast_loop import examples
from tests.probe.test_result import tiny_job
from tests.security.test_org_policy import WASTE, org_pack
from tests.test_diff import commit, git, set_save_steps
from trainlint.cli import main
from trainlint.diff import diff_check
from trainlint.lint import CheckOptions, check, load_jobs
from trainlint.workdir import working_directory

SBATCH = "scripts/train.sbatch"
SMALL = "small/run.sh"
NESTED = "small/.trainlint.toml"
WAIVER = '[[waivers]]\nrule = "TL303"\nreason = "debugging a hang"\n'


def make_repo(root: Path) -> Path:
    """A git work tree: the llama3 job split into scripts/ and configs/, and the gpt2 job in
    small/ (TL303 and TL103 fire there)."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    shutil.copytree(EXAMPLES / "llama3-sft" / "configs", root / "configs")
    (root / "scripts").mkdir()
    shutil.copy(EXAMPLES / "llama3-sft" / "train.slurm", root / SBATCH)
    shutil.copytree(EXAMPLES / "gpt2-finetune", root / "small")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def cli(folder: Path, *args: str) -> tuple[int, str]:
    """``trainlint ARGS`` run from ``folder``: its exit code and output."""
    with working_directory(folder):
        result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def findings(folder: Path, *args: str) -> list[dict[str, Any]]:
    code, output = cli(folder, "check", "--format", "json", *args)
    assert code in (0, 1), output
    found: list[dict[str, Any]] = json.loads(output)["findings"]
    return found


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_a_subfolder_reports_what_the_root_does(repo: Path, fmt: str) -> None:
    """The same bytes, paths, job ids and fingerprints included, from any folder."""
    _, from_root = cli(repo, "check", ".", "--format", fmt)
    _, from_configs = cli(repo / "configs", "check", "..", "--format", fmt)
    assert from_configs == from_root
    assert "../" not in from_configs


def test_paths_are_relative_to_the_root_even_when_only_a_subfolder_is_checked(
    repo: Path,
) -> None:
    files = {f["file"] for f in findings(repo / "small", ".")}
    assert files == {SMALL}


def test_tl103_names_the_entry_file_from_the_root(repo: Path) -> None:
    found = findings(repo / "configs", "..")
    [tl103] = [f for f in found if f["rule"] == "TL103" and f["file"] == SMALL]
    assert f"trainlint probe {SMALL} --world-sizes" in tl103["message"]


def test_a_baseline_written_at_the_root_matches_from_a_subfolder(repo: Path) -> None:
    code, output = cli(repo, "check", ".", "--write-baseline", "baseline.json")
    assert code == 0, output
    found = findings(repo / "configs", "..", "--baseline", "../baseline.json")
    assert found and all(f["suppression"] is not None for f in found)
    assert not [f for f in found if f["rule"] == "TL905"]  # every entry matched


def test_sarif_resolves_its_root(repo: Path) -> None:
    """URIs relative to ``%SRCROOT%``, which ``originalUriBaseIds`` gives as the root's
    absolute ``file`` URI ending in ``/`` (SARIF 2.1.0 §3.14.14)."""
    _, output = cli(repo / "configs", "check", "..", "--format", "sarif")
    run = json.loads(output)["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.resolve().as_uri() + "/"}}
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {SBATCH, SMALL, "configs/sft.yaml"}


def test_outside_git_the_config_folder_is_the_root(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "llama3-sft", tmp_path / "job")
    (tmp_path / "job" / ".trainlint.toml").write_text("")
    found = findings(tmp_path / "job" / "configs", "..")
    assert {f["file"] for f in found} == {"train.slurm", "configs/sft.yaml"}


# -- per-file configuration ----------------------------------------------------------------


def test_a_nested_waiver_applies_when_checking_from_the_root(repo: Path) -> None:
    """How the pre-commit hook runs: from the root, with small/'s config waiving TL303."""
    (repo / NESTED).write_text(WAIVER)
    [tl303] = [f for f in findings(repo, ".") if f["rule"] == "TL303"]
    assert tl303["suppression"]["kind"] == "waiver"
    assert tl303["suppression"]["source"] == NESTED


def test_a_nested_config_applies_only_under_its_folder(repo: Path) -> None:
    """small/'s ignore turns TL103 off for small/ alone; the root's files keep it."""
    (repo / NESTED).write_text('ignore = ["TL103"]\n')
    rules = {(f["file"], f["rule"]) for f in findings(repo, ".")}
    assert (SBATCH, "TL103") in rules
    assert (SMALL, "TL103") not in rules


def test_an_unused_nested_waiver_is_reported_in_its_file(repo: Path) -> None:
    (repo / NESTED).write_text(WAIVER.replace("TL303", "TL301"))
    [unused] = [f for f in findings(repo, ".") if f["rule"] == "TL905"]
    assert unused["file"] == NESTED


# -- order independence --------------------------------------------------------------------


@pytest.fixture(scope="module")
def layered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A repository whose small/ config ignores a rule that fires at the root, and waives one."""
    root = make_repo(tmp_path_factory.mktemp("order") / "repo")
    (root / NESTED).write_text('ignore = ["TL401", "TL101"]\n' + WAIVER)
    (root / ".trainlint.toml").write_text('ignore = ["TL107"]\n')
    (root / "small" / "a-link.sh").symlink_to("run.sh")  # one file, two names
    yield root


def _check(root: Path, names: list[str]) -> list[tuple[str, str, int, str, str | None]]:
    with working_directory(root):
        report = check([Path(name) for name in names])
    return [
        (f.rule, f.file, f.line, f.fingerprint, f.suppression.kind if f.suppression else None)
        for f in report.findings
    ]


def test_path_order_does_not_change_the_findings(layered: Path) -> None:
    assert _check(layered, ["small", "scripts"]) == _check(layered, ["scripts", "small"])


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.permutations(["small", "scripts", "configs", f"{SMALL}", "configs/sft.yaml"]))
def test_any_order_of_paths_gives_the_same_report(layered: Path, names: list[str]) -> None:
    assert _check(layered, names) == _check(layered, sorted(names))


# -- --config FILE -------------------------------------------------------------------------


def test_config_file_is_used_for_every_file(repo: Path) -> None:
    """small/'s own config is not read: the file named applies to every file."""
    (repo / NESTED).write_text('ignore = ["TL303"]\n')
    (repo / "ci.toml").write_text(WAIVER.replace("TL303", "TL401"))
    found = findings(repo / "configs", "..", "--config", "../ci.toml")
    rules = {f["rule"]: f["suppression"] for f in found}
    assert "TL303" in rules  # the nested ignore is not applied
    assert rules["TL401"] == {**rules["TL401"], "kind": "waiver", "source": "ci.toml"}


def test_a_missing_config_file_is_an_error(repo: Path) -> None:
    code, output = cli(repo, "check", ".", "--config", "nope.toml")
    assert code == 2
    assert "'--config': File 'nope.toml' does not exist" in output


def test_an_org_packs_lock_holds_under_a_nested_config(tmp_path: Path) -> None:
    """The root's config layers the org pack that locks TL201; a nested config that ignores
    TL201 does not turn it off for its files, and the attempt is TL906 at that config."""
    root = make_repo(tmp_path / "repo")
    org_pack(root / "policy" / "acme")
    (root / ".trainlint.toml").write_text('[[packs]]\npath = "policy/acme"\n')
    (root / "team").mkdir()
    (root / "team" / "train.slurm").write_text(WASTE)
    (root / "team" / ".trainlint.toml").write_text('ignore = ["TL201"]\n')
    found = findings(root, ".")
    assert ("team/train.slurm", None) in {
        (f["file"], f["suppression"]) for f in found if f["rule"] == "TL201"
    }
    assert "team/.trainlint.toml" in {f["file"] for f in found if f["rule"] == "TL906"}


@pytest.mark.slow  # torch on gloo, world sizes 1 and 2
def test_a_probe_from_a_subfolder_writes_the_measurement_check_reads(repo: Path) -> None:
    """Job ids are root-relative, so the probe runs from the root too: its measurement file
    is the one ``check`` looks up, from whatever folder each was started."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch (trainlint[probe])")
    tiny_job(repo / "team")  # with its own config: the measurements live under team/
    options = ["--world-sizes", "1,2", "--warmup", "1", "--steps", "2", "--device", "cpu"]
    code, output = cli(repo / "configs", "probe", "../team/train.py", *options)
    assert code == 0, output
    with working_directory(repo / "small"):
        [job] = [job for job in load_jobs([Path("..")]) if job.id == "team/train.py"]
    assert job.measurements["fresh"] is True


def llama_at_base(root: Path, configs: dict[str, str]) -> Path:
    """A git repository of the llama example with ``configs`` (path -> text), committed and
    branched as ``base``, the job checkpointing every 500 steps (TL201 quiet)."""
    shutil.copytree(EXAMPLES / "llama3-sft", root / "examples" / "llama3-sft")
    for name, text in configs.items():
        (root / name).write_text(text)
    set_save_steps(root, 500)
    git(root, "init", "-q")
    commit(root, "base")
    git(root, "branch", "base")
    return root


NESTED_LLAMA = "examples/llama3-sft/.trainlint.toml"


def test_diff_mode_with_a_nested_config_only_reports_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base revision's tree is a folder outside git: its paths must still be relative to
    its top, as the head's are to the work tree's, or every finding of a job under a nested
    config looks new."""
    root = llama_at_base(tmp_path / "repo", {NESTED_LLAMA: ""})
    monkeypatch.chdir(root)
    set_save_steps(root, 10)
    diff = diff_check([Path("examples/llama3-sft")], "base", CheckOptions())
    new = {f.rule for f in diff.new}
    assert "TL201" in new
    assert "TL302" not in new  # NCCL_DEBUG=INFO was there at the base too


def test_diff_mode_counts_a_change_to_a_nested_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nested config configures the jobs under it: ignoring TL302 there turns its finding
    off (vanished: the fact is unchanged, so not fixed); the job is touched."""
    root = llama_at_base(tmp_path / "repo", {".trainlint.toml": "", NESTED_LLAMA: ""})
    monkeypatch.chdir(root)
    (root / NESTED_LLAMA).write_text('ignore = ["TL302"]\n')
    diff = diff_check([Path(".")], "base", CheckOptions())
    assert "TL302" in {f.rule for f in [*diff.fixed, *diff.vanished]}


def test_diff_mode_sarif_resolves_its_root(tmp_path: Path) -> None:
    """``check --diff --format sarif`` (the action's code-scanning upload) states its root."""
    root = llama_at_base(tmp_path / "repo", {})
    set_save_steps(root, 10)
    code, output = cli(root / "examples", "check", "..", "--diff", "base", "--format", "sarif")
    assert code == 1, output
    run = json.loads(output)["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": root.resolve().as_uri() + "/"}}
    assert "TL201" in {r["ruleId"] for r in run["results"]}
