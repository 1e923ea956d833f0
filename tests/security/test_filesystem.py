"""A hostile file system never leads trainlint out of the repository, and never goes unsaid.

Issue 15, items 14, 16 and 17, with real FIFOs and symlinks in ``tmp_path`` (skipped where the
platform has none):

- the walk lists a FIFO, a link to a device, a symlink loop, a dangling link and an unreadable
  folder as skipped, with the reason, and opens none of them; a job that references one gets
  its TL901;
- nothing outside the repository is read unless named on the command line: not a walked
  symlink, not a reference through ``..``, a symlinked folder or an absolute path, not a
  ``.gitignore`` that links out, not a named path that a symlink redirects out;
- diff mode's base tree keeps only the links the OS resolves inside it, and a crafted tree
  writes nothing outside it.

A Hydra defaults list composes only group files inside the repository too.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.hang import within
from trainlint.cli import main
from trainlint.diff import materialise
from trainlint.errors import ConfigError
from trainlint.lint import CheckOptions, Loaded, check, load

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
HF_CONFIG = "learning_rate: 2.0e-5\nper_device_train_batch_size: 8\nnum_train_epochs: 3\n"
# A launch whose DeepSpeed JSON sets a micro-batch of 7: the 7 shows when the JSON was read.
LAUNCH = "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --max_steps 100 --deepspeed {}\n"
DEEPSPEED = '{"train_micro_batch_size_per_gpu": 7, "zero_optimization": {"stage": 2}}\n'
OUTSIDE_LAUNCH = "#!/bin/bash\nexport NCCL_DEBUG=INFO\ntorchrun --nproc_per_node 8 train.py\n"


def _outcomes(loaded: Loaded) -> dict[str, tuple[str, str]]:
    return {f.path: (f.outcome, f.reason) for f in loaded.files}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``tmp_path/repo`` (a git checkout: it holds ``.git``) as the current directory, with a
    training launch and its DeepSpeed JSON outside it, in ``tmp_path/outside``."""
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / ".git").mkdir(parents=True)
    outside.mkdir()
    (outside / "env.sh").write_text(OUTSIDE_LAUNCH)
    (outside / "ds.json").write_text(DEEPSPEED)
    (outside / ".gitignore").write_text("train.yaml\n")
    monkeypatch.chdir(root)
    yield root


# -- item 14: entries the walk cannot read are listed, never opened -------------------------


@needs_fifos
@needs_symlinks
def test_the_walk_lists_what_it_cannot_read_as_skipped_and_opens_none(in_tmp: Path) -> None:
    (in_tmp / "train.yaml").write_text(HF_CONFIG)
    os.mkfifo(in_tmp / "jobs.yaml")
    (in_tmp / "loop.yaml").symlink_to("loop.yaml")
    (in_tmp / "gone.json").symlink_to("missing.json")
    if Path("/dev/zero").exists():
        (in_tmp / "zero.yaml").symlink_to("/dev/zero")
    outcomes = _outcomes(within(30, lambda: load([Path(".")])))
    assert outcomes["train.yaml"][0] == "job"
    assert outcomes["jobs.yaml"] == ("skipped", "not a regular file (a FIFO); not read")
    assert outcomes["loop.yaml"] == ("skipped", "symlink loop; not read")
    assert outcomes["gone.json"] == ("skipped", "a symlink to missing.json, which does not exist")
    if Path("/dev/zero").exists():
        assert outcomes["zero.yaml"] == (
            "skipped", "not a regular file (a character device); not read"
        )  # fmt: skip


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_an_unreadable_folder_is_listed_by_show_files(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (in_tmp / "train.yaml").write_text(HF_CONFIG)
    locked = in_tmp / "locked"
    locked.mkdir()
    (locked / "train.yaml").write_text(HF_CONFIG)
    if os.geteuid() == 0:  # root lists any folder: make this one fail as it would for a user
        listing = os.scandir

        def scandir(path: Any) -> Any:
            if Path(path) == Path("locked"):
                raise PermissionError(13, "Permission denied", str(path))
            return listing(path)

        monkeypatch.setattr("trainlint.discover.os.scandir", scandir)
    locked.chmod(0)
    try:
        result = CliRunner().invoke(main, ["show", "--files", "."])
    finally:
        locked.chmod(0o755)
    assert result.exit_code == 0, result.output
    files = {f["path"]: (f["outcome"], f["reason"]) for f in json.loads(result.output)["files"]}
    assert files["locked"] == (
        "skipped", "folder cannot be read (Permission denied); its files are not checked"
    )  # fmt: skip


@needs_fifos
def test_a_job_referencing_a_fifo_gets_its_tl901_not_a_tl904(in_tmp: Path) -> None:
    (in_tmp / "run.sh").write_text(LAUNCH.format("ds.json"))
    os.mkfifo(in_tmp / "ds.json")
    report = within(30, lambda: check([Path(".")], CheckOptions(select=["TL901", "TL904"])))
    assert [(f.rule, f.file, f.line, f.job) for f in report.findings] == [
        ("TL901", "ds.json", 1, "run.sh")
    ]
    assert report.findings[0].message == "not a regular file (a FIFO); not read"


# -- item 16: nothing outside the repository is read unless named ----------------------------


@needs_symlinks
@pytest.mark.parametrize("named", ["cwd", "absolute"])
def test_the_walk_never_follows_a_file_symlink_out_of_the_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    (repo / "launch.sh").symlink_to(tmp_path / "outside" / "env.sh")
    (repo / "scripts").mkdir()
    (repo / "scripts" / "train.sh").write_text(OUTSIDE_LAUNCH)
    (repo / "inside.sh").symlink_to("scripts/train.sh")  # a link inside the repository is read
    if named == "absolute":  # the repository named from elsewhere: its .git marks its top
        monkeypatch.chdir(tmp_path)
    loaded = load([repo if named == "absolute" else Path(".")])
    outside = tmp_path / "outside" / "env.sh"
    assert _outcomes(loaded)["launch.sh"] == (  # paths relative to the repository's top
        "skipped", f"a symlink to {outside}, outside the repository; not read"
    )  # fmt: skip
    assert [job.id for job in loaded.jobs] == ["inside.sh"]


@needs_symlinks
def test_references_out_of_the_repository_are_unresolved_never_read(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (repo / "conf").symlink_to(outside, target_is_directory=True)
    (repo / "dotdot.sh").write_text(LAUNCH.format("../outside/ds.json"))
    (repo / "linked.sh").write_text(LAUNCH.format("conf/ds.json"))
    (repo / "absolute.sh").write_text(LAUNCH.format(outside / "ds.json"))
    jobs = {job.id: job for job in load([Path(".")]).jobs}
    assert sorted(jobs) == ["absolute.sh", "dotdot.sh", "linked.sh"]
    for job in jobs.values():
        assert job.training.micro_batch_size is None  # the outside JSON was never read
        assert [s.path for s in job.sources] == [job.id]
        assert job.missing_references == []
        [unresolved] = job.unresolved_references
        assert "outside the repository" in unresolved.reason
    assert jobs["linked.sh"].unresolved_references[0].reason == (
        f"resolves to {outside / 'ds.json'}, outside the repository; not read"
    )


@needs_symlinks
def test_a_hydra_group_file_linked_out_of_the_repository_is_not_composed(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside" / "evil.yaml").write_text(
        "# @package _global_\ntrainer:\n  max_steps: 31337\n  devices: 8\n"
    )
    (repo / "conf" / "model").mkdir(parents=True)
    (repo / "conf" / "config.yaml").write_text(
        "defaults:\n  - model: evil\n  - _self_\ntrainer:\n  accelerator: gpu\n"
    )
    (repo / "conf" / "model" / "evil.yaml").symlink_to(tmp_path / "outside" / "evil.yaml")
    assert all(job.training.max_steps != 31337 for job in load([Path(".")]).jobs)


@needs_symlinks
@pytest.mark.parametrize("target", ["env.sh", "."])
def test_a_named_path_a_symlink_leads_out_of_the_repository_is_an_error(
    repo: Path, tmp_path: Path, target: str
) -> None:
    """``paths: configs/`` in CI, and the pull request makes ``configs`` a link to the home
    folder: checking it would read the runner's files."""
    (repo / "configs").symlink_to(tmp_path / "outside" / target)
    with pytest.raises(ConfigError, match="leads out of the repository"):
        load([Path("configs")])


@needs_symlinks
def test_a_gitignore_linked_out_of_the_repository_is_not_read(repo: Path, tmp_path: Path) -> None:
    (repo / ".gitignore").symlink_to(tmp_path / "outside" / ".gitignore")  # ignores train.yaml
    (repo / "train.yaml").write_text(HF_CONFIG)
    assert [job.id for job in load([Path(".")]).jobs] == ["train.yaml"]


# -- item 17: diff mode's base tree keeps only links the OS resolves inside it ---------------


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}  # fmt: skip
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
    done = subprocess.run(["git", *identity, "-c", "commit.gpgsign=false", *args], cwd=repo,
                          env=env, input=stdin, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


@needs_symlinks
def test_base_tree_links_are_resolved_as_the_os_would(tmp_path: Path) -> None:
    """``a/b -> ..`` and ``a/c.sh -> b/../secret.sh`` look inside to ``normpath`` (a/secret.sh)
    but open the tree's parent; a chain of such links reaches any absolute path."""
    secret = tmp_path / "secret.sh"
    secret.write_text(OUTSIDE_LAUNCH)
    tree = tmp_path / "tree"
    tree.mkdir()
    root = tmp_path / "git"
    (root / "a").mkdir(parents=True)
    (root / "configs").mkdir()
    (root / "configs" / "x.yaml").write_text(HF_CONFIG)
    (root / "a" / "b").symlink_to("..")
    (root / "a" / "c.sh").symlink_to("b/../secret.sh")
    depth = len(tree.resolve().parts) - 1  # `..` steps from the tree up to /
    previous = "b"
    for step in range(depth):  # a/u0 -> b/.. (the tree's parent), a/u1 -> u0/.., ... -> /
        (root / "a" / f"u{step}").symlink_to(f"{previous}/..")
        previous = f"u{step}"
    (root / "a" / "abs.sh").symlink_to(f"{previous}/{secret.relative_to('/').as_posix()}")
    (root / "a" / "ok.yaml").symlink_to("../configs/x.yaml")  # inside: kept
    (root / "a" / "up.yaml").symlink_to("b/configs/x.yaml")  # inside through a link: kept
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "links")
    materialise(root, _git(root, "rev-parse", "HEAD"), tree)
    real_tree = tree.resolve()
    for link in (tree / "a").iterdir():
        real = Path(os.path.realpath(link))
        assert real == real_tree or real_tree in real.parents, f"{link.name} -> {real}"
    assert not os.path.lexists(tree / "a" / "c.sh")
    assert not os.path.lexists(tree / "a" / "abs.sh")
    assert (tree / "a" / "ok.yaml").read_text() == HF_CONFIG
    assert (tree / "a" / "up.yaml").read_text() == HF_CONFIG


def test_a_crafted_base_tree_never_writes_outside_the_temporary_folder(tmp_path: Path) -> None:
    """``git mktree`` takes a ``..`` entry that no checkout would: its blob must not be written
    above the tree."""
    root = tmp_path / "git"
    root.mkdir()
    _git(root, "init", "-q")
    blob = _git(root, "hash-object", "-w", "--stdin", stdin=OUTSIDE_LAUNCH)
    inner = _git(root, "mktree", stdin=f"100644 blob {blob}\tevil.sh\n")
    middle = _git(root, "mktree", stdin=f"040000 tree {inner}\t..\n")
    top = _git(root, "mktree", stdin=f"040000 tree {middle}\t..\n100644 blob {blob}\tok.sh\n")
    commit = _git(root, "commit-tree", top, "-m", "crafted")
    tree = tmp_path / "base" / "tree"
    tree.mkdir(parents=True)
    materialise(root, commit, tree)
    assert (tree / "ok.sh").read_text() == OUTSIDE_LAUNCH
    assert sorted(p.name for p in tmp_path.rglob("evil.sh")) == []


@needs_symlinks
def test_a_link_is_judged_from_where_the_os_puts_it(tmp_path: Path) -> None:
    """A crafted tree holds both ``a -> .`` and ``a/c -> ../secret.sh``: ``a/c`` is created
    through ``a`` at the top of the tree, where ``..`` leaves it."""
    root = tmp_path / "git"
    root.mkdir()
    _git(root, "init", "-q")
    dot = _git(root, "hash-object", "-w", "--stdin", stdin=".")
    up = _git(root, "hash-object", "-w", "--stdin", stdin="../secret.sh")
    inner = _git(root, "mktree", stdin=f"120000 blob {up}\tc\n")
    top = _git(root, "mktree", stdin=f"120000 blob {dot}\ta\n040000 tree {inner}\ta\n")
    commit = _git(root, "commit-tree", top, "-m", "crafted")
    (tmp_path / "secret.sh").write_text(OUTSIDE_LAUNCH)
    tree = tmp_path / "tree"
    tree.mkdir()
    materialise(root, commit, tree)
    real_tree = tree.resolve()
    for link in [tree / "a", tree / "c", tree / "a" / "c"]:
        if os.path.lexists(link):
            real = Path(os.path.realpath(link))
            assert real == real_tree or real_tree in real.parents, f"{link} -> {real}"
