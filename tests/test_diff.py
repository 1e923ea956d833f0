"""Diff mode against a real git repository built in tmp_path (no global git config used)."""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Golden
from trainlint.diff import diff_check
from trainlint.errors import ConfigError
from trainlint.lint import CheckOptions
from trainlint.report.markdown import MARKER, render_comment
from trainlint.results import DiffReport

TODAY = datetime.date(2026, 11, 29)
SLURM = "examples/llama3-sft/train.slurm"
GPT2 = "examples/gpt2-finetune/run.sh"
FIXED_DATE = "2026-11-01T12:00:00+00:00"


def git(repo: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(repo),  # no user config
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_DATE": FIXED_DATE,
        "GIT_COMMITTER_DATE": FIXED_DATE,
    }
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
    config = ["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", *identity, *config, *args], cwd=repo, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return done.stdout


def set_save_steps(repo: Path, steps: int) -> None:
    script = repo / SLURM
    script.write_text(re.sub(r"--save_steps \d+", f"--save_steps {steps}", script.read_text()))


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Both examples committed, the llama job checkpointing every 500 steps (TL201 quiet)."""
    root = tmp_path / "repo"
    for name in ("llama3-sft", "gpt2-finetune"):
        shutil.copytree(EXAMPLES / name, root / "examples" / name)
    set_save_steps(root, 500)
    git(root, "init", "-q")
    commit(root, "base")
    git(root, "branch", "base")
    monkeypatch.chdir(root)
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    return root


def run(paths: list[str] | None = None, base: str = "base") -> DiffReport:
    return diff_check([Path(p) for p in paths or ["."]], base, CheckOptions(today=TODAY))


def checkpoint_change(repo: Path) -> DiffReport:
    set_save_steps(repo, 10)
    commit(repo, "checkpoint more often")
    return run()


def test_more_frequent_checkpoints_make_tl201_new(repo: Path) -> None:
    diff = checkpoint_change(repo)
    assert diff.changed_files == [SLURM]
    assert [j.job for j in diff.jobs] == [SLURM]  # gpt2 is untouched: not evaluated
    # No TL101: the A100s that would cost less take ~3x as long, so they are no alternative.
    new = {f.rule: f for f in diff.new}
    assert sorted(new) == ["TL201"] and len(diff.new) == 1
    assert (new["TL201"].file, new["TL201"].line) == (SLURM, 20)
    assert new["TL201"].message.startswith("checkpoint every 10 steps: ~1.9 min to save 112 GB")
    assert not diff.fixed
    job = diff.jobs[0]
    assert job.status == "modified" and job.new == 1
    assert job.before and job.after and job.before.usd and job.after.usd
    assert job.after.usd > job.before.usd
    assert (job.after.gpu, job.after.gpus) == ("H100-SXM", 8)
    assert diff.usd_before == job.before.usd and diff.usd_after == job.after.usd
    assert all(f.job == SLURM for f in diff.unchanged) and diff.unchanged


def test_working_tree_changes_count(repo: Path) -> None:
    set_save_steps(repo, 10)  # not committed: a pre-commit run sees it
    diff = run()
    assert "TL201" in [f.rule for f in diff.new]


def test_reverting_fixes_the_finding(repo: Path) -> None:
    set_save_steps(repo, 10)
    commit(repo, "worse")
    git(repo, "branch", "-f", "base")
    set_save_steps(repo, 500)
    diff = run()
    assert [f.rule for f in diff.fixed] == ["TL201"] and not diff.new
    assert not diff.vanished
    job = diff.jobs[0]
    assert job.before and job.after and job.before.usd and job.after.usd
    assert job.after.usd < job.before.usd


def test_added_and_removed_jobs(repo: Path) -> None:
    shutil.rmtree(repo / "examples" / "gpt2-finetune")
    shutil.copytree(repo / "examples" / "llama3-sft", repo / "examples" / "llama-copy")
    diff = run()
    status = {j.job: j.status for j in diff.jobs}
    assert status == {GPT2: "removed", "examples/llama-copy/train.slurm": "added"}
    removed = next(j for j in diff.jobs if j.job == GPT2)
    assert removed and removed.before and removed.after is None
    assert {f.job for f in diff.fixed} == {GPT2}
    assert {f.job for f in diff.new} == {"examples/llama-copy/train.slurm"}


def test_nothing_changed(repo: Path) -> None:
    diff = run()
    assert diff.jobs == [] and diff.new == [] and diff.usd_before is None
    assert MARKER in render_comment(diff)


def test_paths_limit_the_jobs(repo: Path) -> None:
    set_save_steps(repo, 10)
    (repo / GPT2).write_text((repo / GPT2).read_text().replace("1000", "20"))
    assert [j.job for j in run(["examples/gpt2-finetune"]).jobs] == [GPT2]


def test_the_base_is_read_not_checked_out(repo: Path) -> None:
    set_save_steps(repo, 10)
    before = (repo / SLURM).read_text()
    run()
    assert (repo / SLURM).read_text() == before
    assert git(repo, "status", "--porcelain").strip() == f"M {SLURM}"


def test_head_report_counted(repo: Path) -> None:
    diff = checkpoint_change(repo)
    head = diff.head_report_counted()
    # TL302's NCCL debug logging costs more over the 3x longer run: worsened, so it counts
    assert [f.rule for f in diff.worsened] == ["TL302"]
    assert sorted(f.rule for f in head.findings) == ["TL201", "TL302"]
    assert [j.id for j in head.jobs] == [SLURM] and head.rules


def test_json_round_trip(repo: Path) -> None:
    diff = checkpoint_change(repo)
    again = DiffReport.model_validate_json(diff.model_dump_json())
    assert again.new == diff.new and again.jobs == diff.jobs


def test_bad_ref(repo: Path) -> None:
    with pytest.raises(ConfigError, match="unknown git revision 'nope'"):
        run(base="nope")
    with pytest.raises(ConfigError, match="not a git revision"):
        run(base="--output=x")


def test_not_a_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with pytest.raises(ConfigError, match="needs a git repository"):
        diff_check([Path(".")], "main")


def test_checkpoint_diff_comment(repo: Path, golden: Golden) -> None:
    """Acceptance: more frequent checkpoints show the cost delta and the new TL201."""
    diff = checkpoint_change(repo)
    body = render_comment(diff)
    assert body.startswith(MARKER)
    assert "TL201" in body and "checkpoint every 10 steps" in body
    golden("comment_checkpoint_diff.md", body)


def test_cli_diff_mode(repo: Path) -> None:
    from click.testing import CliRunner

    from trainlint.cli import main

    set_save_steps(repo, 10)
    runner = CliRunner()
    result = runner.invoke(main, ["check", "--diff", "base", "--format", "text"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[-1].startswith("1 new, 1 worsened, 0 fixed in 1 touched job; cost per run $")
    assert lines[-1].endswith("(+215%).")
    assert [line.split(": ")[1].split()[0] for line in lines[:-1]] == ["TL201", "TL302"]
    result = runner.invoke(main, ["check", "--diff", "base", "--fail-on", "error"])
    assert result.exit_code == 0, result.output  # new warnings only; unchanged ones never count
    result = runner.invoke(main, ["check", "--diff", "base", "--format", "json"])
    assert DiffReport.model_validate_json(result.output).jobs[0].job == SLURM
    result = runner.invoke(main, ["check", "--diff", "base", "--format", "markdown"])
    assert result.output.startswith(MARKER)
    result = runner.invoke(main, ["check", "--diff", "nope"])
    assert result.exit_code == 2 and "unknown git revision 'nope'" in result.output


def test_untouched_jobs_are_not_evaluated(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import trainlint.diff
    import trainlint.lint

    checked: list[list[str]] = []
    real = trainlint.lint.check  # what trainlint.diff imported

    def spy(paths: list[Path], options: CheckOptions) -> object:
        checked.append([p.as_posix() for p in paths])
        return real(paths, options)

    monkeypatch.setattr(trainlint.diff, "check", spy)
    checkpoint_change(repo)
    assert len(checked) == 2  # base and head
    assert all(paths and not any("gpt2" in p for p in paths) for paths in checked)


def test_cli_diff_mode_hands_jobs_to_the_check_of_both_revisions(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--jobs`` reaches the worker count of the base's check and of the head's (diff mode
    once dropped it); the real ``worker_count`` still decides, the wrapper only records."""
    from click.testing import CliRunner

    import trainlint.lint
    import trainlint.parallel
    from trainlint.cli import main

    asked: set[tuple[Path, int | None]] = set()
    real = trainlint.parallel.worker_count  # what trainlint.lint imported

    def recording(items: int, setting: int | None = None) -> int:
        asked.add((Path.cwd(), setting))
        return real(items, setting)

    monkeypatch.setattr(trainlint.lint, "worker_count", recording)
    set_save_steps(repo, 10)
    result = CliRunner().invoke(main, ["check", "--diff", "base", "--jobs", "2"])
    assert result.exit_code == 1, result.output
    trees = {tree for tree, _ in asked}
    assert len(trees) == 2 and repo.resolve() in {t.resolve() for t in trees}  # base and head
    assert {setting for _, setting in asked} == {2}


# -- a depth-1 CI checkout ---------------------------------------------------------------------


def shallow_clone(repo: Path, into: Path) -> Path:
    """What actions/checkout does: the head commit alone (``--depth 1`` over file://)."""
    git(into.parent, "clone", "-q", "--depth", "1", f"file://{repo}", str(into))
    return into


def test_diff_in_a_depth_1_clone_with_the_base_fetched_at_depth_1(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No shared history (each side one commit): the base's tree is compared with the head's,
    as the merge base would be (GitHub checks out a merge whose first parent is the base)."""
    set_save_steps(repo, 10)
    commit(repo, "checkpoint more often")
    base = git(repo, "rev-parse", "base").strip()
    clone = shallow_clone(repo, tmp_path / "clone")
    git(clone, "fetch", "-q", "--no-tags", "--depth=1", "origin", base)
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    monkeypatch.chdir(clone)
    diff = run(base=base)
    assert diff.base_commit == base and diff.changed_files == [SLURM]
    assert sorted(f.rule for f in diff.new) == ["TL201"] and not diff.fixed


def test_a_base_missing_from_a_shallow_clone_says_how_to_fetch_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from trainlint.cli import main

    set_save_steps(repo, 10)
    commit(repo, "checkpoint more often")
    base = git(repo, "rev-parse", "base").strip()
    monkeypatch.chdir(shallow_clone(repo, tmp_path / "clone"))
    result = CliRunner().invoke(main, ["check", ".", "--diff", base])
    assert result.exit_code == 2, result.output
    assert f"git fetch --depth=1 origin {base}" in result.output


# -- worsened, fixed and vanished --------------------------------------------------------------


def worse_checkpoints(repo: Path) -> DiffReport:
    """Base saves every 50 steps (TL201 already there), head every 5: the same finding costs
    ten times more."""
    set_save_steps(repo, 50)
    commit(repo, "every 50")
    git(repo, "branch", "-f", "base")
    set_save_steps(repo, 5)
    commit(repo, "every 5")
    return run()


def test_a_finding_whose_waste_grew_is_worsened_not_unchanged(repo: Path) -> None:
    diff = worse_checkpoints(repo)
    worse = {f.rule: f for f in diff.worsened}
    assert "TL201" in worse and "TL201" not in [f.rule for f in diff.unchanged + diff.new]
    tl201 = worse["TL201"]
    assert tl201.waste_before and tl201.waste and tl201.waste_before.usd and tl201.waste.usd
    assert tl201.waste.usd >= 1.1 * tl201.waste_before.usd
    assert tl201.message.startswith("checkpoint every 5 steps")
    deltas = [f.usd_delta or 0.0 for f in diff.worsened]
    assert deltas == sorted(deltas, reverse=True) and deltas[0] == tl201.usd_delta
    assert diff.jobs[0].worsened == len(diff.worsened)
    document = DiffReport.model_validate_json(diff.model_dump_json())
    assert document.worsened[0].waste_before == tl201.waste_before


def test_worsened_findings_count_and_show_their_delta_everywhere(repo: Path) -> None:
    from click.testing import CliRunner

    from trainlint.cli import main

    diff = worse_checkpoints(repo)
    delta = diff.worsened[0].usd_delta
    assert delta is not None and not diff.new
    runner = CliRunner()
    text = runner.invoke(main, ["check", "--diff", "base", "--format", "text"])
    assert text.exit_code == 1, text.output  # nothing new, but worse: it counts
    assert "TL201 [warning] checkpoint every 5 steps" in text.output
    assert f"+${delta:,.0f})" in text.output and "worsened" in text.output.splitlines()[-1]
    github = runner.invoke(main, ["check", "--diff", "base", "--format", "github"])
    assert "title=TL201 checkpoint-too-frequent::checkpoint every 5 steps" in github.output
    assert "worse than the base: $" in github.output
    body = render_comment(diff)
    section = body.split("#### 📈 Worsened", 1)[1]
    assert f"**+${delta:,.0f} per run**" in section.split("\n- ")[1]  # the largest Δ$ first
    assert "Unchanged findings" not in body or "TL201" not in body.split("Unchanged", 1)[1]


def hf_job(repo: Path, gpus: int, eval_steps: int) -> None:
    (repo / "train.yaml").write_text(
        f"# trainlint: gpu=H100 gpus={gpus} dataset_samples=1000000\n"
        "model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 4\n"
        "gradient_accumulation_steps: 4\nnum_train_epochs: 1\nmax_seq_length: 2048\n"
        f"bf16: true\neval_strategy: steps\neval_steps: {eval_steps}\nsave_steps: 1000\n"
        "save_total_limit: 2\ndataloader_num_workers: 4\noutput_dir: out\n"
    )


@pytest.fixture
def hf_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An epoch-based HF job evaluating every 10 steps of a 7,813-step run on 8 GPUs (TL305)."""
    root = tmp_path / "hf"
    root.mkdir()
    hf_job(root, gpus=8, eval_steps=10)
    git(root, "init", "-q")
    commit(root, "base")
    git(root, "branch", "base")
    monkeypatch.chdir(root)
    return root


def test_a_finding_turned_off_by_another_fact_is_not_fixed(hf_repo: Path) -> None:
    """64 GPUs make the epoch 977 steps, under TL305's 1,000-step floor: eval_steps is still
    10, so TL305 vanished rather than being fixed."""
    hf_job(hf_repo, gpus=64, eval_steps=10)
    diff = run()
    assert "TL305" not in [f.rule for f in diff.fixed]
    assert [f.rule for f in diff.vanished] == ["TL305"]
    assert "No longer reported, though the fact is unchanged (1)" in render_comment(diff)


def test_changing_the_fact_a_finding_points_at_fixes_it(hf_repo: Path) -> None:
    hf_job(hf_repo, gpus=8, eval_steps=100)
    diff = run()
    assert "TL305" in [f.rule for f in diff.fixed] and not diff.vanished


def test_one_diff_evaluation_writes_every_output_format(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--output-format FORMAT=FILE``: annotations on stdout, and the JSON, SARIF and comment
    rendered from the same two checks (base and head), not one check per output."""
    from click.testing import CliRunner

    import trainlint.diff
    import trainlint.lint
    from trainlint.cli import main

    calls: list[int] = []
    real = trainlint.lint.check  # what trainlint.diff imported

    def counting(paths: list[Path], options: CheckOptions) -> object:
        calls.append(1)
        return real(paths, options)

    monkeypatch.setattr(trainlint.diff, "check", counting)
    set_save_steps(repo, 10)
    args = ["check", "--diff", "base", "--format", "github", "--output-format", "json=o/d.json",
            "--output-format", "sarif=o/t.sarif", "--output-format", "markdown=o/c.md"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert len(calls) == 2 and "::warning file=" in result.output
    diff = DiffReport.model_validate_json((repo / "o" / "d.json").read_text())
    assert sorted(f.rule for f in diff.new) == ["TL201"]
    assert (repo / "o" / "c.md").read_text().startswith(MARKER)
    assert '"version": "2.1.0"' in (repo / "o" / "t.sarif").read_text()
    bad = CliRunner().invoke(main, ["check", "--output-format", "yaml=x"])
    assert bad.exit_code == 2 and "expected FORMAT=FILE" in bad.output


# -- a shared base inherited through a config that is a job itself ----------------------------

MM_RUNTIME = "configs/_base_/default_runtime.py"
MM_MID = "configs/yolov5/yolov5_s_8xb16-300e_coco.py"  # a run, and the leaf's base
MM_LEAF = "configs/yolov5/yolov5_s_fast_8xb16-300e_coco.py"


def mm_runtime(repo: Path, interval: int) -> None:
    (repo / MM_RUNTIME).write_text(
        "default_scope = 'mmyolo'\n"
        f"default_hooks = dict(logger=dict(type='LoggerHook', interval={interval}))\n"
    )


@pytest.fixture
def mm_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """mmyolo's chain: the runtime fragment ← a 300-epoch config (a job) ← a faster variant."""
    root = tmp_path / "mm"
    (root / "configs" / "_base_").mkdir(parents=True)
    (root / "configs" / "yolov5").mkdir()
    mm_runtime(root, 50)
    (root / MM_MID).write_text(
        "_base_ = '../_base_/default_runtime.py'\n"
        "train_dataloader = dict(batch_size=16, num_workers=8)\n"
        "train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=300, val_interval=10)\n"
    )
    (root / MM_LEAF).write_text(
        "_base_ = './yolov5_s_8xb16-300e_coco.py'\ntrain_dataloader = dict(batch_size=32)\n"
    )
    git(root, "init", "-q")
    commit(root, "base")
    git(root, "branch", "base")
    monkeypatch.chdir(root)
    return root


def test_a_shared_base_change_touches_every_job_inheriting_it_through_another_job(
    mm_repo: Path,
) -> None:
    """A base read through a config that is a job itself is a source of the inheriting job
    too (review of mmyolo: 121 of 133 jobs listed only their own file), so ``--diff``
    re-checks both jobs, while the middle config still roots its own job."""
    from click.testing import CliRunner

    from trainlint.cli import main

    shown = CliRunner().invoke(main, ["show", MM_LEAF])
    assert shown.exit_code == 0, shown.output
    (leaf,) = json.loads(shown.output)["jobs"]
    assert [s["path"] for s in leaf["sources"]] == [MM_LEAF, MM_MID, MM_RUNTIME]
    assert leaf["provenance"]["/logging/every_steps"]["file"] == MM_RUNTIME
    mm_runtime(mm_repo, 1)
    commit(mm_repo, "log every step")
    result = CliRunner().invoke(main, ["check", "--diff", "base", "--format", "json"])
    diff = DiffReport.model_validate_json(result.output)
    assert sorted(job.job for job in diff.jobs) == [MM_MID, MM_LEAF]
