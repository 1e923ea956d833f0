"""``pack init``: the skeleton loads, its Rego tests pass and its cases pass on every engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from trainlint import engine as engines
from trainlint.engine.rego_tests import run_rego_tests
from trainlint.errors import ConfigError
from trainlint.lint import CheckOptions, check
from trainlint.packs import Pack, load_pack
from trainlint.packs.bundle import build
from trainlint.packs.scaffold import init, next_rule_id, rule_id


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("packs") / "acme"
    init("acme", root)
    return root


def test_skeleton_files(scaffold: Path) -> None:
    files = sorted(p.relative_to(scaffold).as_posix() for p in scaffold.rglob("*") if p.is_file())
    assert files == [
        ".manifest",
        "README.md",
        "max_gpus_per_job.rego",
        "max_gpus_per_job_test.rego",
        "tests/cases/ACME001.yaml",
        "trainlint/params/max_gpus_per_job/data.json",
    ]


def test_skeleton_loads_with_full_metadata(scaffold: Path) -> None:
    pack = load_pack(scaffold)
    assert pack.name == "acme" and pack.manifest is not None
    assert pack.manifest.info.min_trainlint_version
    (rule,) = pack.rules
    assert (rule.id, rule.slug, rule.severity, rule.category) == (
        "ACME001",
        "max-gpus-per-job",
        "warning",
        "governance",
    )
    assert rule.package == "trainlint.rules.max_gpus_per_job"
    assert rule.why and rule.example.startswith("# train.slurm") and rule.fix and rule.references
    assert pack.data == {"trainlint": {"params": {"max_gpus_per_job": {"max_gpus": 64}}}}


def test_skeleton_rego_tests_pass(scaffold: Path) -> None:
    results = run_rego_tests(load_pack(scaffold))
    assert len(results) == 4
    assert all(result.passed for result in results), [r for r in results if not r.passed]


def _cases(root: Path) -> list[tuple[str, dict[str, Any]]]:
    document = yaml.safe_load((root / "tests" / "cases" / "ACME001.yaml").read_text())
    return [(document["rule"], case) for case in document["cases"]]


@pytest.mark.parametrize("engine_name", engines.available_engines())
def test_skeleton_cases_pass(
    scaffold: Path, engine_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = load_pack(scaffold)
    cases = _cases(scaffold)
    assert (
        sum(1 for _, c in cases if c["expect"]) >= 3
        and sum(1 for _, c in cases if not c["expect"]) >= 2
    )
    for index, (rule, case) in enumerate(cases):
        folder = tmp_path / str(index)
        for name, text in case["files"].items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        monkeypatch.chdir(folder)
        _check_case(pack, rule, case, engine_name)


def _check_case(pack: Pack, rule: str, case: dict[str, Any], engine_name: str) -> None:
    report = check([Path(".")], CheckOptions(engine_name=engine_name, select=[rule], pack=pack))
    assert not report.errors, report.errors
    got = sorted((f.file, f.line, f.column) for f in report.findings if f.rule == rule)
    want = sorted((e["file"], e["line"], e["column"]) for e in case["expect"])
    assert got == want, case["name"]
    for expected in case["expect"]:
        parts = expected.get("message", [])
        finding = next(f for f in report.findings if f.line == expected["line"])
        for part in [parts] if isinstance(parts, str) else parts:
            assert part in finding.message


def test_skeleton_builds_and_the_bundle_loads(scaffold: Path, tmp_path: Path) -> None:
    archive = tmp_path / "acme.tar.gz"
    build(scaffold, archive)
    assert load_pack(archive).rules == load_pack(scaffold).rules


@pytest.mark.parametrize(
    ("name", "expected"),
    [("acme", "ACME001"), ("my-org.ml", "MYORGML001"), ("42labs", "ORG42LAB001")],
)
def test_rule_id_from_the_pack_name(name: str, expected: str) -> None:
    assert rule_id(name) == expected


def test_init_refuses_a_bad_name_or_a_used_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pack name 'Bad Name'"):
        init("Bad Name", tmp_path / "x")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "file").write_text("")
    with pytest.raises(ConfigError, match="not an empty directory"):
        init("acme", tmp_path / "used")


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        (["ACME001"], "ACME002"),
        (["ACME009", "ACME010", "ACME002"], "ACME011"),
        (["ORG7", "ORG12"], "ORG13"),
        ([], "ACME001"),
        (["ORG-A"], "ACME001"),
    ],
)
def test_next_rule_id_follows_the_packs_numbering(ids: list[str], expected: str) -> None:
    assert next_rule_id(ids, "acme") == expected
