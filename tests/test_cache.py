"""The persistent cache (``trainlint.cache``, issue 19): the same report byte for byte with
and without it, reuse of what did not change, and no trust in what trainlint did not write.

Each test works on a copy of the examples in a git repository of its own (the project root,
where ``.trainlint_cache`` goes), with the signing key in a temporary XDG cache folder.
"""

from __future__ import annotations

import datetime
import os
import pickle
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES, REPO
from trainlint import assemble, cli, lint
from trainlint import cache as caching
from trainlint.job import Job
from trainlint.lint import CheckOptions, check
from trainlint.read import Workspace
from trainlint.report import names, renderer
from trainlint.sources.base import Document


@pytest.fixture(autouse=True)
def _user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The signing key in a temporary folder, never the user's (``XDG_CACHE_HOME``)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TRAINLINT_NO_CACHE")  # tests/conftest.py turns it off elsewhere


def project(tmp_path: Path, *examples: str) -> Path:
    """A git repository holding a copy of each example, in a folder of its name."""
    root = tmp_path / "project"
    for name in examples:
        shutil.copytree(EXAMPLES / name, root / name)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def rendered(root: Path, *, cache: bool) -> dict[str, str]:
    """The check of ``root`` in every report format."""
    report = check([root], CheckOptions(cache=cache))
    return {fmt: renderer(fmt)(report) for fmt in names()}


def entries(root: Path, kind: str) -> dict[str, object]:
    """Every entry of ``kind`` in the project's cache, merged (a table's items)."""
    cache = caching.Cache.open(root / caching.CACHE_DIR)
    assert cache is not None
    merged: dict[str, object] = {}
    for file in sorted((cache.folder / kind).iterdir()):
        value = cache.get(kind, file.name)
        assert isinstance(value, dict), file
        merged.update(value)
    return merged


def test_every_format_is_the_same_with_the_cache_cold_and_warm(tmp_path: Path) -> None:
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    fresh = rendered(root, cache=False)
    assert not (root / caching.CACHE_DIR).exists()  # no cache unless asked
    assert rendered(root, cache=True) == fresh  # cold: everything computed, then stored
    assert (root / caching.CACHE_DIR / ".gitignore").read_text().splitlines()[-1] == "*"
    assert entries(root, "evaluation")  # something was stored...
    assert rendered(root, cache=True) == fresh  # ...and a warm run gives the same bytes


def test_an_edit_is_seen_and_only_the_job_including_it_is_evaluated_again(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    check([root], CheckOptions(cache=True))
    before = set(entries(root, "evaluation"))
    member = root / "llama3-sft" / "configs" / "sft.yaml"  # a member of train.slurm's job
    member.write_text(member.read_text().replace("logging_steps: 1", "logging_steps: 50"))

    report = check([root], CheckOptions(cache=True))

    assert report == check([root], CheckOptions(cache=False))
    assert not [f for f in report.findings if f.file.endswith("sft.yaml") and f.line == 17]
    after = set(entries(root, "evaluation"))
    jobs = [job.id for job in report.jobs]
    edited = [job for job in jobs if job.startswith("llama3-sft/")]
    assert len(after - before) == len(edited) == 1  # only that job's input changed
    assert len(before & after) >= len(jobs) - 1  # every other job's evaluation was kept


def test_a_corrupt_or_unsigned_entry_is_ignored_never_an_error_never_loaded(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, "llama3-sft")
    fresh = rendered(root, cache=False)
    rendered(root, cache=True)
    folder = next((root / caching.CACHE_DIR).glob("*-*"))
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    assert {path.parent.name for path in files} >= {"run", "document", "evaluation"}
    for path in files:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])  # torn or damaged
    assert rendered(root, cache=True) == fresh

    # A cache shipped in the repository: well-formed pickles, signed with another key.
    planted = tmp_path / "planted"
    for path in sorted(path for path in folder.rglob("*") if path.is_file()):
        body = pickle.dumps(Planted(str(planted)))
        path.write_bytes(b"\0" * caching.SIGNATURE + body)
    assert rendered(root, cache=True) == fresh
    assert not planted.exists()  # never unpickled


class Planted:
    """A pickle that, when loaded, writes a file: the attack a signed entry refuses."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (Path.write_text, (Path(self.path), "loaded"))  # type: ignore[return-value]


def test_the_cache_folder_is_never_input(tmp_path: Path) -> None:
    root = project(tmp_path, "llama3-sft")
    inside = root / caching.CACHE_DIR / "sft.yaml"
    inside.parent.mkdir()
    shutil.copy(root / "llama3-sft" / "configs" / "sft.yaml", inside)
    report = check([root], CheckOptions(cache=True))
    assert not [f for f in report.files if caching.CACHE_DIR in f.path]


def test_the_config_names_the_cache_folder_and_no_cache_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, "llama3-sft")
    monkeypatch.chdir(root)
    runner = CliRunner()
    plain = runner.invoke(cli.main, ["check", "--no-cache", "."])
    assert plain.exit_code == 1, plain.output
    assert not (root / caching.CACHE_DIR).exists()
    (root / ".trainlint.toml").write_text('cache-dir = "build/tl-cache"\n')
    first = runner.invoke(cli.main, ["check", "."])
    second = runner.invoke(cli.main, ["check", "."])
    assert first.output == second.output == plain.output
    assert (root / "build" / "tl-cache" / ".gitignore").is_file()
    assert not (root / caching.CACHE_DIR).exists()


def test_two_processes_at_once_share_a_cache_safely(tmp_path: Path) -> None:
    """Two real runs on a cold cache write the same entries at once (each a temporary file
    renamed into place); both, and a third warm run, report what a run without it does."""
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg-processes")}
    command = [sys.executable, "-m", "trainlint", "check", "--format", "json", str(root)]
    plain = subprocess.run([*command, "--no-cache"], capture_output=True, text=True, env=env,
                           cwd=REPO, timeout=120, check=False)  # fmt: skip
    pipe = subprocess.PIPE
    runs = [
        subprocess.Popen(command, stdout=pipe, stderr=pipe, text=True, env=env, cwd=REPO)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [out for out, _ in outputs] == [plain.stdout] * 2, [err for _, err in outputs]
    warm = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120, check=False)  # fmt: skip
    assert warm.stdout == plain.stdout
    assert not list((root / caching.CACHE_DIR).rglob(".tmp-*"))  # no torn write left behind


def test_a_new_nested_config_and_an_edited_config_are_seen(tmp_path: Path) -> None:
    """A config file is no candidate, yet it changes the files under it: the cached load
    holds only while each folder searched for a config has the same config files."""
    root = project(tmp_path, "llama3-sft")
    cached = rendered(root, cache=True)
    assert "TL301" in cached["text"]
    nested = root / "llama3-sft" / "configs" / ".trainlint.toml"
    nested.write_text('formats = {"sft.yaml" = "axolotl"}\n')  # read as another format
    other = rendered(root, cache=False)
    assert other != cached
    assert rendered(root, cache=True) == other
    nested.write_text('formats = {"sft.yaml" = "hf-trainer"}\n')  # back, in an edited file
    assert rendered(root, cache=True) == rendered(root, cache=False) == cached


# A whole report reused (``lint._report_key``): only while nothing it depends on changed.

WAIVER = '[[waivers]]\nrule = "TL303"\nreason = "NCCL traces for a ticket"\nexpires = 2026-06-30\n'


def test_a_report_is_reused_for_an_unchanged_tree_and_the_same_settings(tmp_path: Path) -> None:
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    fresh = rendered(root, cache=False)
    assert rendered(root, cache=True) == fresh
    assert list((root / caching.CACHE_DIR).glob("*-*/report/*"))  # stored...
    assert rendered(root, cache=True) == fresh  # ...and reused, the same bytes


def test_a_waiver_expiring_is_seen_by_a_reused_report(tmp_path: Path) -> None:
    """The report depends on the day: a waiver stops suppressing the day after it expires."""
    root = project(tmp_path, "llama3-sft")
    (root / ".trainlint.toml").write_text(WAIVER)
    days = [datetime.date(2026, 6, 30), datetime.date(2026, 7, 1)]
    reports = [check([root], CheckOptions(cache=True, today=day)) for day in days]
    assert reports == [check([root], CheckOptions(today=day)) for day in days]
    assert reports[0] != reports[1]  # the waiver expired in between


def test_other_settings_and_an_edited_baseline_are_seen_by_a_reused_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line's selection, --strict, the approvers and the baseline's bytes (a
    file trainlint never reads as input) are part of a report's key."""
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    (root / ".trainlint.toml").write_text(WAIVER.replace("2026-06-30", "2099-01-01"))
    monkeypatch.chdir(root)
    check([root], CheckOptions(cache=True))
    for options in (
        {"select": ["TL3"]},
        {"ignore": ["TL303"]},
        {"strict": True},
        {"approved_by": ["platform-team"]},
    ):
        warm = check([root], CheckOptions(cache=True, **options))
        assert warm == check([root], CheckOptions(**options)), options
    written = CliRunner().invoke(cli.main, ["check", "--write-baseline", "base.json", "."])
    assert written.exit_code == 0, written.output
    baseline = root / "base.json"
    first = check([root], CheckOptions(cache=True, baseline=baseline))
    assert first == check([root], CheckOptions(baseline=baseline))
    empty = tmp_path / "empty"
    empty.mkdir()
    CliRunner().invoke(cli.main, ["check", "--write-baseline", str(baseline), str(empty)])
    again = check([root], CheckOptions(cache=True, baseline=baseline))
    assert again == check([root], CheckOptions(baseline=baseline))
    assert again != first  # no finding is baselined any more


def test_a_file_created_nearer_a_referrer_is_seen(tmp_path: Path) -> None:
    """A reference is looked for from its referrer's folder up to the root, so a file created
    on the way (here in a git-ignored folder: no candidate, so discovery finds nothing new)
    becomes the one it names: the cached load depends on each place looked in vain."""
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    shutil.copytree(EXAMPLES / "llama3-sft" / "configs", root / "configs")
    shutil.copy(EXAMPLES / "llama3-sft" / "train.slurm", root / "scripts" / "train.slurm")
    (root / ".gitignore").write_text("scripts/configs/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    first = rendered(root, cache=True)
    nearer = root / "scripts" / "configs" / "sft.yaml"
    nearer.parent.mkdir()
    text = (root / "configs" / "sft.yaml").read_text()
    nearer.write_text(text.replace("logging_steps: 1\n", "logging_steps: 50\n"))
    fresh = rendered(root, cache=False)
    assert fresh != first
    assert rendered(root, cache=True) == fresh
    shutil.rmtree(nearer.parent)
    assert rendered(root, cache=True) == rendered(root, cache=False) == first


@pytest.mark.slow
def test_changed_trainlint_code_never_reads_the_entries_of_the_code_before(tmp_path: Path) -> None:
    """An editable install keeps its version while its code changes: the cache folder follows
    the modules' digest, so a developer's edit shows at once (it showed the old findings)."""
    copy = tmp_path / "copy"
    for part in ("trainlint", "policies", "schemas"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples" / "llama3-sft", work)
    env = {k: v for k, v in os.environ.items() if k != "TRAINLINT_NO_CACHE"}
    env["PYTHONPATH"] = str(copy)

    def check() -> str:
        done = subprocess.run([sys.executable, "-m", "trainlint", "check", "."], cwd=work,
                              env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        return done.stdout

    assert "TL301" in check()
    assert "TL301" in check()  # warm: from the cache
    module = copy / "trainlint" / "sources" / "hf_trainer.py"
    module.write_text(module.read_text().replace('"logging_steps": [J', '"logging_stepz": [J'))
    assert "TL301" not in check()


def test_an_edit_rewrites_only_the_document_shards_of_its_old_and_new_key(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    check([root], CheckOptions(cache=True))
    cache = caching.Cache.open(root / caching.CACHE_DIR)
    assert cache is not None
    shards = cache.folder / "document"
    written = {path.name: path.stat().st_ino for path in shards.iterdir()}
    before = set(entries(root, "document"))
    member = root / "llama3-sft" / "configs" / "sft.yaml"
    member.write_text(member.read_text().replace("logging_steps: 1", "logging_steps: 50"))

    assert rendered(root, cache=True) == rendered(root, cache=False)
    after = set(entries(root, "document"))
    (old,), (new,) = before - after, after - before  # the edited file's key, and nothing else
    rewritten = {
        path.name for path in shards.iterdir() if written.get(path.name) != path.stat().st_ino
    }
    assert rewritten == {f"{name.split('-')[0]}-{key[0]}" for name in written for key in (old, new)}


def test_a_file_whose_bytes_are_unchanged_keeps_its_last_document_key(tmp_path: Path) -> None:
    root = project(tmp_path, "llama3-sft")
    path = root / "llama3-sft" / "configs" / "sft.yaml"
    space = Workspace()
    content = caching.file_digest(path)
    assert content is not None
    keys = caching.KeyMemo(known={str(path): (content, "last run's key")})
    assert keys.key(space, path, {}) == "last run's key"  # no config looked up again
    path.write_text(path.read_text() + "\n")
    assert keys.key(space, path, {}) == caching.document_key(space, path) != "last run's key"


def test_document_keys_are_carried_over_only_while_every_config_holds(tmp_path: Path) -> None:
    """An edit keeps the other files' keys (the same report as --no-cache); an edited config
    can force another format on an unchanged file, so then no key is carried over."""
    root = project(tmp_path, "llama3-sft")
    nested = root / "llama3-sft" / "configs" / ".trainlint.toml"
    nested.write_text('formats = {"sft.yaml" = "hf-trainer"}\n')
    check([root], CheckOptions(cache=True))
    script = root / "llama3-sft" / "train.slurm"
    script.write_text(script.read_text() + "# edited\n")
    assert carried(root) == {"sft.yaml", "ds_zero3.json", "train.slurm"}
    assert rendered(root, cache=True) == rendered(root, cache=False)

    script.write_text(script.read_text() + "# edited again\n")
    nested.write_text('formats = {"sft.yaml" = "axolotl"}\n')  # sft.yaml: same bytes, new key
    assert carried(root) == set()
    assert rendered(root, cache=True) == rendered(root, cache=False)


def carried(root: Path) -> set[str]:
    """The names of the files whose document keys the project's stored load hands on now."""
    cache = caching.Cache.open(root / caching.CACHE_DIR)
    assert cache is not None
    (scope,) = [path.name for path in (cache.folder / "run").iterdir()]
    entry = cache.get("run", scope)
    salt = cache.get("carry", scope)[1][0]
    memo = caching.Carried()
    assert caching.RunMemo(cache, scope, entry[0]).get(memo, salt) is None  # edited
    return {Path(path).name for path in memo.keys.known}


def built_jobs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The entry file of each job ``build_job`` builds from now on (a reused one is not)."""
    built: list[str] = []
    build = assemble.build_job

    def counted(documents: list[Document], missing: Sequence[Any] = ()) -> Job:
        built.append(documents[0].path)
        return build(documents, missing)

    monkeypatch.setattr(assemble, "build_job", counted)
    return built


def test_an_edit_builds_only_the_job_that_includes_the_edited_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    check([root], CheckOptions(cache=True))
    built = built_jobs(monkeypatch)
    member = root / "llama3-sft" / "configs" / "sft.yaml"  # a member of train.slurm's job
    member.write_text(member.read_text().replace("logging_steps: 1", "logging_steps: 50"))

    report = check([root], CheckOptions(cache=True))

    assert built == ["llama3-sft/train.slurm"]  # gpt2-finetune's job was reused, finished
    built.clear()
    assert report == check([root], CheckOptions(cache=False))  # estimates and all
    assert len(built) == len(report.jobs) == 2


def test_edits_that_move_a_file_out_of_a_job_and_back_are_seen(tmp_path: Path) -> None:
    root = project(tmp_path, "llama3-sft")
    script = root / "llama3-sft" / "train.slurm"
    original = script.read_text()
    rendered(root, cache=True)
    script.write_text(original.replace("    --config configs/sft.yaml \\\n", ""))

    alone = rendered(root, cache=False)
    assert rendered(root, cache=True) == alone
    jobs = {job.id for job in check([root], CheckOptions(cache=True)).jobs}
    assert "llama3-sft/configs/sft.yaml" in jobs  # no longer referenced: a job of its own

    script.write_text(original)
    assert rendered(root, cache=True) == rendered(root, cache=False) != alone
    jobs = {job.id for job in check([root], CheckOptions(cache=True)).jobs}
    assert jobs == {"llama3-sft/train.slurm"}


def test_a_hydra_app_naming_another_config_is_seen(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "app" / "conf").mkdir(parents=True)
    app = root / "app" / "train.py"
    app.write_text('@hydra.main(config_path="conf", config_name="ppo")\ndef main(cfg): ...\n')
    for name, epochs in (("ppo", 30), ("big", 300)):
        (root / "app" / "conf" / f"{name}.yaml").write_text(
            f"trainer:\n  total_epochs: {epochs}\n  save_freq: 10\n  n_gpus_per_node: 8\n"
        )
    (root / "run.sh").write_text("#!/bin/bash\npython app/train.py trainer.save_freq=1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    first = rendered(root, cache=True)
    app.write_text(app.read_text().replace('"ppo"', '"big"'))
    assert rendered(root, cache=True) == rendered(root, cache=False) != first


def test_a_reused_job_keeps_its_measurements_as_they_were(tmp_path: Path) -> None:
    """A job reused finished is not measured again (a broken measurement is one TL901, not
    two); a changed measurement folder measures and estimates every job again."""
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    folder = root / "llama3-sft" / ".trainlint" / "measurements"
    folder.mkdir(parents=True)
    (folder / "train.slurm.json").write_text("{not json")
    check([root], CheckOptions(cache=True))
    script = root / "gpt2-finetune" / "run.sh"
    script.write_text(script.read_text() + "# edited\n")

    report = check([root], CheckOptions(cache=True))

    assert report == check([root], CheckOptions(cache=False))
    broken = [f for f in report.findings if f.rule == "TL901" and "measurement" in f.message]
    assert len(broken) == 1
    (folder / "train.slurm.json").write_text('{"fingerprint": "0", "world_sizes": {}}')
    script.write_text(script.read_text() + "# edited again\n")
    assert rendered(root, cache=True) == rendered(root, cache=False)


def test_a_load_s_documents_dropped_from_the_table_are_read_again(tmp_path: Path) -> None:
    """A stored load names its documents in the document table; when a run of the same
    scope has dropped them since, they are read again from the unchanged files."""
    root = project(tmp_path, "llama3-sft")
    fresh = rendered(root, cache=False)
    rendered(root, cache=True)
    cache = caching.Cache.open(root / caching.CACHE_DIR)
    assert cache is not None
    shutil.rmtree(cache.folder / "document")
    shutil.rmtree(cache.folder / "report")  # so the report is made again from the documents
    assert rendered(root, cache=True) == fresh


def test_findings_are_made_again_only_for_the_edited_job_and_fixes_follow_the_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each job's findings and fixes come from the cache while its evaluation and its files'
    bytes are the same: an edit that leaves the job's facts as they were (``1`` written
    ``0x1``) still moves the fix's edit, so the job's findings are made again."""
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    check([root], CheckOptions(cache=True))
    made: list[str] = []
    make = lint._made_findings

    def counted(job: Job, *args: Any) -> lint.Made:
        made.append(job.id)
        return make(job, *args)

    monkeypatch.setattr(lint, "_made_findings", counted)
    member = root / "llama3-sft" / "configs" / "sft.yaml"
    member.write_text(member.read_text().replace("logging_steps: 1\n", "logging_steps: 0x1\n"))

    assert rendered(root, cache=True) == rendered(root, cache=False)  # SARIF holds the fixes
    assert made[0] == "llama3-sft/train.slurm"  # the cached run: the edited job's only
    assert len(made) == 1 + 2  # the uncached run: every job's


def test_a_load_knows_each_job_s_input_digest_as_evaluation_makes_it(tmp_path: Path) -> None:
    """The digest of each job's Rego input, carried with the job's closure (evaluations are
    looked up by it without serializing every job again), is the one evaluation makes."""
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    cache = caching.Cache.open(root / caching.CACHE_DIR)
    first = lint.load([root], cache=cache)
    script = root / "gpt2-finetune" / "run.sh"
    script.write_text(script.read_text() + "# edited\n")
    edited = lint.load([root], cache=cache)  # one job built, one reused finished
    warm = lint.load([root], cache=cache)  # restored whole
    for loaded in (first, edited, warm):
        assert loaded.inputs == {job.id: lint._input_digest(job) for job in loaded.jobs}


def test_each_folder_s_config_is_carried_while_every_config_holds(tmp_path: Path) -> None:
    """An edited run takes each folder's config as the last run found it (no search): a
    nested config keeps applying to its files, and one created is seen."""
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    (root / "llama3-sft" / ".trainlint.toml").write_text('ignore = ["TL302"]\n')
    check([root], CheckOptions(cache=True))
    script = root / "gpt2-finetune" / "run.sh"
    script.write_text(script.read_text() + "# edited\n")

    report = check([root], CheckOptions(cache=True))

    assert report == check([root], CheckOptions(cache=False))
    assert not [f for f in report.findings if f.rule == "TL302" and not f.suppression]
    (root / "gpt2-finetune" / ".trainlint.toml").write_text('ignore = ["TL303"]\n')
    script.write_text(script.read_text() + "# edited again\n")
    assert rendered(root, cache=True) == rendered(root, cache=False)
    assert not [f for f in check([root], CheckOptions(cache=True)).findings if f.rule == "TL303"]


def test_an_edited_run_reads_only_the_documents_it_assembles(tmp_path: Path) -> None:
    """The documents of the jobs reused are left in the cache (their outcomes and inline
    suppressions come from the summary kept beside each), and read whole on demand."""
    root = project(tmp_path, "llama3-sft", "gpt2-finetune")
    cache = caching.Cache.open(root / caching.CACHE_DIR)
    lint.load([root], cache=cache)
    script = root / "gpt2-finetune" / "run.sh"
    script.write_text(script.read_text() + "# edited\n")

    edited = lint.load([root], cache=cache, lazy_documents=True)

    assert {doc.path for doc in edited.documents.values()} == {"gpt2-finetune/run.sh"}
    assert {stub.summary.path for stub in edited.stubs.values()} == {
        "llama3-sft/train.slurm", "llama3-sft/configs/sft.yaml", "llama3-sft/configs/ds_zero3.json"
    }  # fmt: skip
    fresh = lint.load([root])
    assert edited.files == fresh.files
    assert edited.read_documents() == fresh.documents and not edited.stubs


def test_an_edited_base_config_is_seen_by_the_configs_read_through_it(tmp_path: Path) -> None:
    """An MMEngine config's reading reads its ``_base_`` files (their values are its facts,
    located in them): an edited base changes the inheriting config's document, whose own
    bytes did not change; the cache keeps what each reading consulted, and reads again."""
    root = tmp_path / "project"
    (root / "configs" / "_base_").mkdir(parents=True)
    base = root / "configs" / "_base_" / "runtime.py"
    base.write_text(
        "default_hooks = dict(\n    logger=dict(type='LoggerHook', interval=1),\n"
        "    checkpoint=dict(type='CheckpointHook', interval=1),\n)\n"
    )
    (root / "configs" / "exp.py").write_text(
        "_base_ = ['./_base_/runtime.py']\n"
        "model = dict(type='ImageClassifier', backbone=dict(type='ResNet', depth=50))\n"
        "train_cfg = dict(by_epoch=True, max_epochs=100)\n"
        "train_dataloader = dict(batch_size=32, num_workers=2)\n"
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    first = rendered(root, cache=True)
    base.write_text("# the runtime\n" + base.read_text().replace("interval=1)", "interval=5)", 1))

    assert rendered(root, cache=True) == rendered(root, cache=False) != first
