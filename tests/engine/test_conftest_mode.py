"""``check --conftest POLICY_DIR``: an existing conftest policy directory runs unchanged.

The policies are what a team kept from conftest: Rego v0 (``deny[msg] {...}``, no manifest),
``package main``, rules over the raw manifest (``input.kind == "PyTorchJob"``). The inputs are
real files: a PyTorchJob manifest (the kubernetes format's fixture), a multi-document YAML, a
JSON list, a TOML file and a YAML file with another tool's tags; each document is one input,
as conftest evaluates it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fast_loop import engines
from trainlint import lint
from trainlint.cli import main
from trainlint.conftest_input import InputError, parse_inputs
from trainlint.errors import ConfigError
from trainlint.results import Report

K8S_POLICY = """package main

deny[msg] {
  input.kind == "PyTorchJob"
  not input.spec.runPolicy.ttlSecondsAfterFinished
  msg := sprintf("PyTorchJob %s keeps its pods: set ttlSecondsAfterFinished", [input.metadata.name])
}

warn[{"msg": msg, "pointer": "/spec/pytorchReplicaSpecs/Worker/replicas"}] {
  input.kind == "PyTorchJob"
  input.spec.pytorchReplicaSpecs.Worker.replicas > 2
  msg := "more than 2 workers"
}

deny_configmap[msg] {
  input.kind == "ConfigMap"
  not exempt[input.metadata.name]
  msg := sprintf("ConfigMap %s is not allowed here", [input.metadata.name])
}

exempt := {"allowed"}

violation[{"msg": "no learning rate", "_loc": {"file": "hparams.toml", "line": 1}}] {
  input.optimizer
  not input.optimizer.lr
}

deny_image[msg] {
  startswith(input.image, "docker.io/")
  msg := "docker hub image"
}
"""

V1_POLICY = """package main

deny contains msg if {
  input.kind == "Secret"
  msg := "no secrets in the repository"
}
"""

PYTORCH_JOB = Path(__file__).parents[1] / "sources/fixtures/kubernetes/pytorchjob_gpu.yaml"

MULTI_DOCUMENT = """apiVersion: v1
kind: ConfigMap
metadata:
  name: first
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: allowed
---

---
apiVersion: v1
kind: ConfigMap
metadata:
  name: third
"""

HPARAMS = """[optimizer]
name = "adamw"
created = 2024-05-01
"""


@pytest.fixture
def repo(in_tmp: Path) -> Path:
    policy = in_tmp / "policy"
    policy.mkdir()
    (policy / "k8s.rego").write_text(K8S_POLICY)
    (policy / "secrets.rego").write_text(V1_POLICY)
    (policy / "k8s_test.rego").write_text("package main\n\ntest_nothing { true }\n")
    (in_tmp / "job.yaml").write_text(PYTORCH_JOB.read_text())
    (in_tmp / "configmaps.yaml").write_text(MULTI_DOCUMENT)
    (in_tmp / "hparams.toml").write_text(HPARAMS)
    (in_tmp / "images.json").write_text(json.dumps([{"image": "docker.io/x"}, {"image": "y"}]))
    (in_tmp / "gitlab.yml").write_text("build:\n  script: !reference [.setup, script]\n")
    return in_tmp


def _conftest(report: Report) -> list[tuple[str, str, str, int, int]]:
    return [(f.rule, f.severity, f.file, f.line, f.column) for f in report.findings
            if not f.rule.startswith("TL")]  # fmt: skip


@pytest.mark.parametrize("engine_name", ["regorus"])
def test_conftest_policies_see_each_document(repo: Path, engine_name: str) -> None:
    options = lint.CheckOptions(conftest=Path("policy"), engine_name=engine_name)
    report = lint.check([Path(".")], options)
    assert not report.errors, report.errors
    assert _conftest(report) == [
        ("main.deny_configmap", "error", "configmaps.yaml", 1, 1),
        ("main.deny_configmap", "error", "configmaps.yaml", 13, 1),  # the empty one skipped
        ("main.violation", "error", "hparams.toml", 1, 1),  # _loc as the policy gives it
        ("main.deny_image", "error", "images.json", 1, 1),  # a JSON list: one input each
        ("main.deny", "error", "job.yaml", 1, 1),  # the PyTorchJob document starts on line 1
        ("main.warn", "warning", "job.yaml", 45, 7),  # pointer → where replicas: 3 is written
    ]
    messages = {f.message for f in report.findings}
    assert "PyTorchJob llama-sft keeps its pods: set ttlSecondsAfterFinished" in messages
    assert "ConfigMap allowed is not allowed here" not in messages
    assert len({f.fingerprint for f in report.findings}) == len(report.findings)


def test_regopy_refuses_the_v0_policies(repo: Path) -> None:
    from trainlint.errors import PolicyError

    with pytest.raises(PolicyError, match="Rego v0, which regopy cannot parse"):
        lint.check([Path(".")], lint.CheckOptions(conftest=Path("policy"), engine_name="regopy"))


@pytest.mark.parametrize("engine_name", engines())
def test_v1_policies_run_on_every_engine(in_tmp: Path, engine_name: str) -> None:
    (in_tmp / "policy").mkdir()
    (in_tmp / "policy" / "secrets.rego").write_text(V1_POLICY)
    (in_tmp / "secret.yaml").write_text("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")
    options = lint.CheckOptions(conftest=Path("policy"), engine_name=engine_name)
    report = lint.check([Path(".")], options)
    assert _conftest(report) == [("main.deny", "error", "secret.yaml", 1, 1)]


def test_a_file_that_does_not_parse_is_a_run_error(repo: Path) -> None:
    (repo / "broken.yaml").write_text("a: [1, 2\n")
    (repo / "chart.yaml").write_text("name: {{ .Values.name }}\n{{ toYaml .Values.x }}\n")
    report = lint.check([Path(".")], lint.CheckOptions(conftest=Path("policy")))
    assert [(e.job, e.message) for e in report.errors] == [
        ("broken.yaml", "conftest: broken.yaml:2:1: invalid YAML: did not find expected ',' or ']'")
    ]  # the Helm template is no error: conftest reads what it renders to


def test_namespaces_select_the_packages(repo: Path) -> None:
    with pytest.raises(ConfigError, match="no package to run"):
        lint.check([Path(".")], lint.CheckOptions(conftest=Path("policy"), namespaces=["org.*"]))


def test_cli_conftest_option(repo: Path) -> None:
    result = CliRunner().invoke(main, ["check", ".", "--conftest", "policy", "--format", "json"])
    assert result.exit_code == 1, result.output
    rules = [f["rule"] for f in json.loads(result.output)["findings"]]
    assert rules.count("main.deny_configmap") == 2 and "main.deny" in rules


def test_inputs_are_what_conftest_parses() -> None:
    documents = parse_inputs(MULTI_DOCUMENT, "yaml", "c.yaml")
    assert [(d.value["metadata"]["name"], d.line, d.index) for d in documents] == [
        ("first", 1, 0), ("allowed", 6, 1), ("third", 13, 2)
    ]  # fmt: skip
    tagged = parse_inputs("build:\n  script: !reference [.setup, script]\n", "yaml", "g.yml")
    assert tagged[0].value == {"build": {"script": [".setup", "script"]}}
    toml = parse_inputs(HPARAMS, "toml", "h.toml")
    assert toml[0].value == {"optimizer": {"name": "adamw", "created": "2024-05-01"}}
    assert [d.value for d in parse_inputs("- 1\n- 2\n", "yaml", "l.yaml")] == [1, 2]
    with pytest.raises(InputError, match=r"x\.json:1:2: invalid JSON"):
        parse_inputs("{", "json", "x.json")
