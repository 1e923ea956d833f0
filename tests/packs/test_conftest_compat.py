"""Conftest policies (deny / violation / warn, strings or objects with msg) run on the job model.

The policies below are written as conftest users write them (conftest's docs: ``package main``,
``deny contains msg if {...}``, ``msg := sprintf(...)``), plus structured results with ``_loc``,
a ``pointer``, and an ``exception``, and they run on both embedded engines and over OPA's REST
API with the same results.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fast_loop import engines
from tests.packs.opa_server import serve
from trainlint import lint
from trainlint.cli import main
from trainlint.conftest_compat import (
    ConftestPlan,
    conftest_findings,
    conftest_namespaces,
    conftest_rule_ids,
    conftest_rules,
    select_namespaces,
)
from trainlint.engine import create_engine
from trainlint.errors import PolicyError
from trainlint.job import Job
from trainlint.packs import Pack, load_builtin_pack
from trainlint.results import Report

# The shape of conftest's own README/docs example, on the job model instead of a Deployment.
CONFTEST_DOCS_STYLE = """package main

import rego.v1

deny contains msg if {
  input.training.precision == "fp32"
  msg := sprintf("%s trains in fp32: use bf16 or fp16 mixed precision", [input.id])
}

warn contains {"msg": "no team tag: costs cannot be charged back", "pointer": "/tags"} if {
  not input.tags.team
}

deny_short_run contains {"msg": "max_steps is tiny", "_loc": {"file": "train.yaml", "line": 3}} if {
  is_number(input.training.max_steps)
  input.training.max_steps < 5000
}

deny_empty contains "" if { true }

helper := 1
"""

ORG_POLICY = """package org.training

import rego.v1

violation_fp32 contains {"msg": "fp32 is banned by org policy", "pointer": "/training/precision",
                         "owner": "platform"} if {
  input.training.precision == "fp32"
}

warn_long contains "long run" if {
  is_number(input.training.max_steps)
  input.training.max_steps > 100
}

exception contains rules if {
  input.tags.waiver == "fp32"
  rules := ["fp32"]
}
"""

TRAIN_YAML = """model_name_or_path: gpt2
per_device_train_batch_size: 8
max_steps: 1000
bf16: false
fp16: false
"""


def _pack(**extra: str) -> Pack:
    builtin = load_builtin_pack()
    modules = {"conftest/main.rego": CONFTEST_DOCS_STYLE, "conftest/org.rego": ORG_POLICY}
    return dataclasses.replace(builtin, modules={**builtin.modules, **modules, **extra})


def _input(**fields: Any) -> dict[str, Any]:
    sources = [{"path": "train.yaml", "format": "hf_trainer", "role": "config"}]
    return Job.model_validate({"id": "train.yaml", "sources": sources, **fields}).as_input()


FP32 = _input(training={"precision": "fp32", "max_steps": 1000})
WAIVED = _input(training={"precision": "fp32", "max_steps": 1000}, tags={"waiver": "fp32"})


@pytest.fixture
def job_folder(in_tmp: Path) -> Path:
    (in_tmp / "train.yaml").write_text(TRAIN_YAML)
    return in_tmp


def _summary(report: Report) -> list[tuple[str, str, str, int, int]]:
    return [
        (f.rule, f.severity, f.file, f.line, f.column)
        for f in report.findings
        if not f.rule.startswith("TL")
    ]


def test_namespaces_and_rules_come_from_the_pack() -> None:
    pack = _pack()
    namespaces = conftest_namespaces(pack)
    assert {"main", "org.training", "trainlint.rules.checkpoint_too_frequent"} <= set(namespaces)
    rules = conftest_rules(pack)
    assert rules["main"] == ["deny", "warn", "deny_short_run", "deny_empty"]
    assert rules["org.training"] == ["violation_fp32", "warn_long", "exception"]
    assert rules["trainlint.rules.checkpoint_too_frequent"] == []
    assert conftest_rule_ids(pack) == [f"main.{name}" for name in rules["main"]]


def test_namespace_selection_like_conftest() -> None:
    pack = _pack()
    assert select_namespaces(pack) == ["main"]
    assert select_namespaces(load_builtin_pack()) == []  # no main: nothing to query
    assert select_namespaces(pack, ["org.*"]) == ["org.training"]
    assert select_namespaces(pack, ["org.*", "main", "data.main"]) == ["org.training", "main"]
    assert select_namespaces(pack, ["remote.only"]) == ["remote.only"]  # an OPA server may have it
    assert select_namespaces(pack, ["nothing.*"]) == []
    assert select_namespaces(pack, [], all_namespaces=True) == conftest_namespaces(pack)


def test_check_runs_main_by_default(job_folder: Path) -> None:
    report = lint.check([Path(".")], lint.CheckOptions(pack=_pack()))
    assert not report.errors
    assert _summary(report) == [
        ("main.deny", "error", "train.yaml", 1, 1),  # no pointer: the job's file
        ("main.warn", "warning", "train.yaml", 1, 1),  # /tags is set nowhere
        ("main.deny_short_run", "error", "train.yaml", 3, 1),  # _loc, as conftest gives it
    ]
    deny = next(f for f in report.findings if f.rule == "main.deny")
    assert deny.message == "train.yaml trains in fp32: use bf16 or fp16 mixed precision"
    assert deny.name == "main.deny" and deny.job == "train.yaml" and deny.fingerprint


def test_check_namespace_globs_and_all_namespaces(job_folder: Path) -> None:
    org = lint.check([Path(".")], lint.CheckOptions(pack=_pack(), namespaces=["org.*"]))
    assert _summary(org) == [
        ("org.training.warn_long", "warning", "train.yaml", 1, 1),
        ("org.training.violation_fp32", "error", "train.yaml", 5, 1),  # pointer → fp16: false
    ]
    everything = lint.check([Path(".")], lint.CheckOptions(pack=_pack(), all_namespaces=True))
    assert {f.rule for f in everything.findings if not f.rule.startswith("TL")} == {
        "main.deny", "main.warn", "main.deny_short_run",
        "org.training.violation_fp32", "org.training.warn_long",
    }  # fmt: skip


@pytest.mark.parametrize("engine_name", engines())
def test_results_and_exceptions(engine_name: str) -> None:
    pack = _pack()
    engine = create_engine(engine_name, pack)
    results = conftest_findings(engine.query, FP32, ["main", "org.training"], conftest_rules(pack))
    assert [(r.rule, r.severity, r.message) for r in results] == [
        ("main.deny", "error", "train.yaml trains in fp32: use bf16 or fp16 mixed precision"),
        ("main.deny_short_run", "error", "max_steps is tiny"),
        ("main.warn", "warning", "no team tag: costs cannot be charged back"),
        ("org.training.violation_fp32", "error", "fp32 is banned by org policy"),
        ("org.training.warn_long", "warning", "long run"),
    ]
    violation = results[3]
    assert violation.pointer == "/training/precision"
    assert violation.metadata == {"owner": "platform"}
    assert violation.query == "data.org.training.violation_fp32"
    assert results[1].location is not None and results[1].location.line == 3
    waived = conftest_findings(engine.query, WAIVED, ["org.training"], conftest_rules(pack))
    assert [r.rule for r in waived] == ["org.training.warn_long"]  # violation_fp32 excepted


@pytest.mark.parametrize("engine_name", engines())
def test_reading_whole_namespaces_gives_the_same_results(engine_name: str) -> None:
    """Without the local rule list (policies only a server holds), rules are found by name."""
    pack = _pack()
    engine = create_engine(engine_name, pack)
    for job in (FP32, WAIVED):
        known = conftest_findings(engine.query, job, ["main", "org.training"], conftest_rules(pack))
        assert conftest_findings(engine.query, job, ["main", "org.training"]) == known


def test_bare_exception_exempts_bare_rules() -> None:
    documents = {
        "data.ns.deny": ["a"],
        "data.ns.deny_x": ["b"],
        "data.ns.exception": [[""]],
    }
    rules = {"ns": ["deny", "deny_x", "exception"]}
    results = conftest_findings(lambda _input, query: documents.get(query), {}, ["ns"], rules)
    assert [r.rule for r in results] == ["ns.deny_x"]


def test_same_results_over_the_opa_rest_api() -> None:
    pack = _pack()
    with serve(pack) as (url, _):
        remote = create_engine("opa", pack, opa_url=url)
        local = create_engine("regorus", pack)
        for job in (FP32, WAIVED):
            names = ["main", "org.training", "remote.only"]
            assert conftest_findings(remote.query, job, names, conftest_rules(pack)) == (
                conftest_findings(local.query, job, names, conftest_rules(pack))
            )
            assert conftest_findings(remote.query, job, names) == conftest_findings(
                local.query, job, names
            )


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("package bad\nimport rego.v1\ndeny if { true }\n", "data.bad.deny is a boolean"),
        ('package bad\nimport rego.v1\nwarn contains {"message": "x"} if { true }\n', "'msg'"),
        ('package bad\nimport rego.v1\ndeny contains {"msg": "x", "_loc": 3} if { true }\n',
         "_loc"),
        ('package bad\nimport rego.v1\ndeny contains {"msg": "x", "pointer": 3} if { true }\n',
         "pointer"),
    ],
)  # fmt: skip
def test_malformed_results_are_policy_errors(source: str, error: str) -> None:
    pack = _pack(**{"conftest/bad.rego": source})
    engine = create_engine("regorus", pack)
    with pytest.raises(PolicyError, match=error):
        conftest_findings(engine.query, FP32, ["bad"], conftest_rules(pack))


def test_a_malformed_rule_is_a_run_error_for_the_job(job_folder: Path) -> None:
    pack = _pack(**{"conftest/bad.rego": "package bad\nimport rego.v1\ndeny if { true }\n"})
    report = lint.check([Path(".")], lint.CheckOptions(pack=pack, namespaces=["bad"]))
    assert [e.message for e in report.errors] == [
        "data.bad.deny is a boolean: conftest rules are sets, write `deny contains msg if {...}`"
    ]


def test_report_findings_for_one_job() -> None:
    pack = _pack()
    where = {"file": "train.yaml", "line": 7, "column": 3}
    job = Job.model_validate({
        "id": "train.yaml", "sources": [{"path": "train.yaml", "format": "hf_trainer"}],
        "training": {"precision": "fp32"}, "provenance": {"/training/precision": where},
    })  # fmt: skip
    engine = create_engine("regorus", pack)
    findings = ConftestPlan.of(pack, ["org.training"]).findings(engine, job)
    assert [(f.rule, f.line, f.column) for f in findings] == [("org.training.violation_fp32", 7, 3)]
    assert ConftestPlan.of(load_builtin_pack()).findings(engine, job) == []


def test_cli_namespace_options(job_folder: Path) -> None:
    """The policies arrive the way an org ships them: a pack the repo config lists."""
    pack = job_folder / "org-pack"
    pack.mkdir()
    (pack / "main.rego").write_text(CONFTEST_DOCS_STYLE)
    (pack / "org.rego").write_text(ORG_POLICY)
    (job_folder / ".trainlint.toml").write_text('[[packs]]\npath = "org-pack"\n')
    runner = CliRunner()
    default = runner.invoke(main, ["check", "."])
    assert "train.yaml:3:1: main.deny_short_run [error] max_steps is tiny" in default.output
    assert "org.training" not in default.output
    org = runner.invoke(main, ["check", ".", "--namespace", "org.*", "--format", "json"])
    assert '"rule": "org.training.violation_fp32"' in org.output
    assert '"main.deny"' not in org.output
    every = runner.invoke(main, ["check", ".", "--all-namespaces"])
    assert "main.deny" in every.output and "org.training.warn_long" in every.output
    assert every.exit_code == 1
