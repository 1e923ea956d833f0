"""SARIF reporter: the official 2.1.0 schema, GitHub code scanning's requirements, stability."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

import trainlint
from tests.conftest import REPO
from tests.report.canonical import builtin_rule, canonical_report, finding
from tests.report.github_sarif import github_problems
from trainlint.cli import main
from trainlint.findings import Finding, Suppression, Waste
from trainlint.packs import RuleMeta, load_builtin_pack
from trainlint.report import _links, renderer, sarif
from trainlint.results import Report, RunError

SCHEMA = REPO.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"
PINNED_VERSION = "0.1.0"  # the golden file must not change with every release


@pytest.fixture
def pinned_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trainlint, "__version__", PINNED_VERSION)


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    """The official schema, offline: it declares draft-04 and has no external ``$ref``."""
    if not SCHEMA.exists():
        pytest.skip(f"official SARIF schema not found at {SCHEMA}")
    schema = json.loads(SCHEMA.read_text())
    assert "http" not in "".join(_refs(schema)), "the schema must validate without network"
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def render(report: Report) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(sarif.render(report))
    return log


def test_canonical_report_matches_golden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Any, pinned_version: None
) -> None:
    report = canonical_report(tmp_path, monkeypatch)
    text = sarif.render(report)
    root = sarif.root_uri(tmp_path)
    golden("report_sarif.json", text.replace(root, "file:///ROOT/"))
    assert str(tmp_path) not in text.replace(root, "")  # no absolute path but the root's
    assert sarif.render(report) == text  # rendering twice gives the same bytes


def test_canonical_report_is_valid_sarif_for_github(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    validator: jsonschema.protocols.Validator,
) -> None:
    report = canonical_report(tmp_path, monkeypatch)
    log = render(report)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    assert github_problems(log) == []
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == sorted(rule.id for rule in report.rules)
    assert len(run["results"]) == len(report.findings)
    assert all(not r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
               .startswith("/") for r in run["results"])  # fmt: skip


def test_rule_descriptor_comes_from_the_rule_metadata_and_docs() -> None:
    rule = _rule("TL201")
    log = render(Report(rules=(rule,), params={"checkpoint_too_frequent": {"min_steps": 7}}))
    (descriptor,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert descriptor["id"] == "TL201"
    assert descriptor["name"] == "checkpoint-too-frequent"
    description = " ".join(rule.description.split())
    assert description.startswith(descriptor["shortDescription"]["text"])
    assert descriptor["shortDescription"]["text"].endswith(".")
    assert descriptor["fullDescription"]["text"] == description[:1024]
    assert descriptor["help"]["markdown"].startswith("# checkpoint-too-frequent (TL201)")
    assert "`min_steps` = `7`" in descriptor["help"]["markdown"]
    assert descriptor["defaultConfiguration"] == {"level": "warning"}
    assert descriptor["properties"]["tags"] == [rule.category]
    assert "security-severity" not in descriptor["properties"]  # cost rules are not security
    assert descriptor["helpUri"] == f"{_links.RULES_DOCS}#checkpoint-too-frequent-tl201"


def test_result_fields(validator: jsonschema.protocols.Validator) -> None:
    finding = _finding(waste=Waste(gpu_hours=49.97, usd=174.88), severity="info")
    log = render(Report(findings=[finding], rules=(_rule("TL201"),)))
    validator.validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "TL201"
    assert result["ruleIndex"] == 0
    assert result["level"] == "note"
    assert result["message"]["text"] == "checkpoint every 10 steps (~50 GPU-h, ~$175 per run)"
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "jobs/train.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 12, "startColumn": 3, "endLine": 12},
    }
    assert result["properties"] == {
        "job": "jobs/train.yaml",
        "waste": {"gpu_hours": 49.97, "usd": 174.88},
    }
    assert "suppressions" not in result
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True}]


def test_fingerprint_is_stable_across_lines_and_distinct_per_job() -> None:
    def fingerprint(**changes: Any) -> str:
        result = render(Report(findings=[_finding(**changes)]))["runs"][0]["results"][0]
        return str(result["partialFingerprints"][sarif.FINGERPRINT_KEY])

    assert fingerprint() == fingerprint(line=40, column=9)
    assert fingerprint() != fingerprint(job="jobs/other.yaml")
    assert fingerprint() != fingerprint(fingerprint="0123456789abcdef")


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("inline", "inSource"), ("file", "inSource"), ("per-file-ignores", "external"),
     ("waiver", "external"), ("baseline", "external")],
)  # fmt: skip
def test_suppressions(kind: str, expected: str, validator: jsonschema.protocols.Validator) -> None:
    suppression = Suppression.model_validate(
        {"kind": kind, "reason": "known", "approved_by": "ops", "source": "a.yaml:3"}
    )
    log = render(Report(findings=[_finding(suppression=suppression)]))
    validator.validate(log)
    (entry,) = log["runs"][0]["results"][0]["suppressions"]
    assert entry["kind"] == expected
    assert entry["status"] == "accepted"
    assert entry["justification"] == "known"
    assert entry["properties"] == {"trainlintKind": kind, "approvedBy": "ops", "source": "a.yaml:3"}


def test_suppression_without_reason_has_no_empty_justification() -> None:
    finding = _finding(suppression=Suppression(kind="baseline"))
    entry = render(Report(findings=[finding]))["runs"][0]["results"][0]["suppressions"][0]
    assert "justification" not in entry
    assert entry["kind"] == "external"


def test_rules_only_findings_name_get_a_minimal_descriptor(
    validator: jsonschema.protocols.Validator,
) -> None:
    conftest = _finding(rule="main.deny", name="main.deny", severity="error")
    log = render(Report(findings=[conftest, _finding()], rules=(_rule("TL201"),)))
    validator.validate(log)
    assert github_problems(log) == []
    run = log["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["TL201", "main.deny"]
    minimal = run["tool"]["driver"]["rules"][1]
    assert minimal["name"] == "main.deny"
    assert minimal["defaultConfiguration"] == {"level": "error"}
    by_rule = {result["ruleId"]: result["ruleIndex"] for result in run["results"]}
    assert by_rule == {"TL201": 0, "main.deny": 1}


def test_errors_are_tool_execution_notifications(
    validator: jsonschema.protocols.Validator,
) -> None:
    errors = [RunError(job="jobs/b.yaml", message="cannot parse"), RunError(job="a", message="x")]
    log = render(Report(errors=errors))
    validator.validate(log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    notes = invocation["toolExecutionNotifications"]
    assert [note["message"]["text"] for note in notes] == ["a: x", "jobs/b.yaml: cannot parse"]
    assert all(note["level"] == "error" for note in notes)


@pytest.mark.parametrize(
    ("file", "uri"),
    [
        ("examples/llama3 sft/train.yaml", "examples/llama3%20sft/train.yaml"),
        ("jobs/#1/ü.yaml", "jobs/%231/%C3%BC.yaml"),
        ("./jobs/a:b.yaml", "jobs/a%3Ab.yaml"),
        ("../sibling/train.yaml", "../sibling/train.yaml"),
    ],
)
def test_artifact_uris_are_relative_posix_and_percent_encoded(file: str, uri: str) -> None:
    assert sarif.artifact_uri(file) == uri


def test_absolute_paths_become_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert sarif.artifact_uri(str(tmp_path / "jobs" / "train.yaml")) == "jobs/train.yaml"
    outside = sarif.artifact_uri(str(tmp_path.parent / "x.yaml"))
    assert outside == "../x.yaml"


def test_semantic_version_only_when_the_version_is_semver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trainlint, "__version__", "0.2.0.dev3")
    driver = render(Report())["runs"][0]["tool"]["driver"]
    assert driver["version"] == "0.2.0.dev3"
    assert "semanticVersion" not in driver
    monkeypatch.setattr(trainlint, "__version__", "0.2.0")
    assert render(Report())["runs"][0]["tool"]["driver"]["semanticVersion"] == "0.2.0"


def test_long_descriptions_are_clipped_to_githubs_limit() -> None:
    long = RuleMeta(**{**vars(_rule("TL201")), "description": "word " * 400})
    descriptor = render(Report(rules=(long,)))["runs"][0]["tool"]["driver"]["rules"][0]
    assert len(descriptor["fullDescription"]["text"]) == 1024
    assert len(descriptor["shortDescription"]["text"]) <= 1024


def test_format_is_registered_and_offered_by_the_cli() -> None:
    assert renderer("sarif") is sarif.render
    result = CliRunner().invoke(main, ["check", "--help"])
    assert "sarif" in result.output


RULES_MD = REPO / "docs" / "rules.md"


def _github_anchor(heading: str) -> str:
    """The id GitHub gives a Markdown heading: lower case, punctuation dropped, spaces → -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _builtin_descriptors() -> list[dict[str, Any]]:
    rules = load_builtin_pack().rules
    descriptors: list[dict[str, Any]] = render(Report(rules=rules))["runs"][0]["tool"]["driver"][
        "rules"
    ]
    return descriptors


def test_every_builtin_rule_links_to_its_section_of_the_rules_docs() -> None:
    anchors = {
        _github_anchor(line.lstrip("#"))
        for line in RULES_MD.read_text().splitlines()
        if line.startswith("## ")
    }
    for descriptor in _builtin_descriptors():
        base, _, anchor = descriptor["helpUri"].partition("#")
        assert base == _links.RULES_DOCS
        assert anchor in anchors, descriptor["id"]


def test_short_description_is_a_one_sentence_title() -> None:
    """GitHub shows shortDescription as the rule's title: one sentence, short enough to read
    as one (TL403's and TL907's first sentences alone ran to 390 characters)."""
    for descriptor in _builtin_descriptors():
        text = descriptor["shortDescription"]["text"]
        assert len(text) <= sarif.TITLE_LIMIT, descriptor["id"]
        assert text.endswith((".", "…")), descriptor["id"]
        assert not re.search(r"[.!?] [A-Z]", text), descriptor["id"]  # one sentence
        assert text != descriptor["fullDescription"]["text"] or len(text) < 100


def test_title_cuts_a_long_sentence_to_its_main_clause() -> None:
    long = "Fires on a job (a.b unknown) whose x is set: " + "one, " * 60 + "end. Then more."
    assert sarif.title(long) == "Fires on a job (a.b unknown) whose x is set."
    assert sarif.title("Short one, e.g. this. Second.") == "Short one, e.g. this."


def test_pack_rules_link_to_their_first_related_resource() -> None:
    base = vars(_rule("TL201"))
    linked = RuleMeta(
        **{
            **base,
            "id": "ACME101",
            "package": "acme.rules.x",
            "references": ("https://wiki.acme.example/gpu", "https://b.example"),
        }
    )
    bare = RuleMeta(**{**base, "id": "ACME102", "package": "acme.rules.y", "references": ()})
    log = render(Report(rules=(linked, bare)))
    by_id = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert by_id["ACME101"]["helpUri"] == "https://wiki.acme.example/gpu"
    assert "helpUri" not in by_id["ACME102"]
    assert github_problems(log) == []


def test_the_github_checker_finds_what_github_rejects() -> None:
    """The checker can fail: each planted fault is reported."""
    log = render(Report(findings=[_finding()], rules=(_rule("TL201"),)))
    result = log["runs"][0]["results"][0]
    physical = result["locations"][0]["physicalLocation"]
    physical["region"]["startLine"] = -1  # KICS's bug, which GitHub rejects
    physical["artifactLocation"]["uri"] = "/abs/jobs/train.yaml"
    del result["partialFingerprints"]
    log["runs"][0]["tool"]["driver"]["rules"][0]["shortDescription"]["text"] = "x" * 1025
    problems = " | ".join(github_problems(log))
    for expected in ("startLine", "not relative", "partialFingerprints", "longer than 1024"):
        assert expected in problems


def _rule(rule_id: str) -> RuleMeta:
    return builtin_rule(rule_id)


def _finding(**changes: Any) -> Finding:
    return finding(**{"message": "checkpoint every\n  10 steps", **changes})
