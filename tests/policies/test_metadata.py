"""Rule METADATA is complete and consistent: it is the source of docs, SARIF and findings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from trainlint.errors import PolicyError
from trainlint.packs import SEVERITIES, load_builtin_pack, load_pack, module_package

BUILTIN = load_builtin_pack()
STABLE_IDS = {  # DESIGN §5: ids are stable forever
    "TL101": "oversized-gpu",
    "TL102": "does-not-fit",
    "TL103": "multi-gpu-unmeasured",
    "TL104": "communication-bound",
    "TL105": "no-mixed-precision",
    "TL106": "dataloader-starvation",
    "TL107": "needless-recompute",
    "TL201": "checkpoint-too-frequent",
    "TL202": "unbounded-checkpoints",
    "TL203": "no-checkpoint-long-run",
    "TL204": "spot-without-checkpoint",
    "TL206": "checkpoint-interval-beyond-run",
    "TL207": "export-every-checkpoint",
    "TL208": "uncapped-resume-loop",
    "TL301": "log-every-step",
    "TL302": "debug-logging",
    "TL303": "blocking-debug",
    "TL304": "profiler-always-on",
    "TL305": "eval-too-frequent",
    "TL306": "per-step-diagnostics",
    "TL401": "missing-cost-tags",
    "TL402": "over-budget",
    "TL403": "no-time-limit",
    "TL404": "unknown-hardware",
    "TL405": "time-limit-far-beyond-run",
    "TL406": "duplicate-experiment",
    "TL407": "monthly-budget",
    "TL501": "no-fallback",
    "TL502": "no-seed",
    "TL901": "parse-error",
    "TL902": "stale-measurement",
    "TL903": "unknown-key",
    "TL904": "missing-reference",
    "TL905": "unused-suppression",
    "TL906": "lock-violation",
    "TL907": "unsupported-workload",
    "TL108": "impossible-parallelism",
    "TL109": "batch-size-mismatch",
}
GOOD_METADATA = """\
# METADATA
# title: sample-rule
# description: Something worth knowing.
# custom:
#   id: X001
#   severity: warning
#   category: testing
#   remediation: Do the other thing.
"""
BODY = "package trainlint.rules.sample_rule\n\nimport rego.v1\n\nfindings := set()\n"


def _params(rule_package: str) -> dict[str, object]:
    params: dict[str, dict[str, object]] = BUILTIN.data["trainlint"]["params"]
    return params.get(rule_package.rsplit(".", 1)[-1], {})


def test_ids_are_stable() -> None:
    assert {rule.id: rule.slug for rule in BUILTIN.rules} == STABLE_IDS


@pytest.mark.parametrize("rule", BUILTIN.rules, ids=lambda rule: rule.id)
def test_rule_metadata_is_complete(rule: object) -> None:
    from trainlint.packs import RuleMeta

    assert isinstance(rule, RuleMeta)
    assert re.fullmatch(r"TL\d{3}", rule.id)
    assert rule.severity in SEVERITIES
    assert rule.package == "trainlint.rules." + rule.slug.replace("-", "_")
    assert len(rule.description) > 80, "say what fires and why it matters"
    assert rule.category and rule.remediation
    assert len(rule.why) > 80 and rule.example and rule.fix, "ruff's doc sections"
    assert rule.example != rule.fix
    assert all(ref.startswith("https://") for ref in rule.references)


def test_ids_and_slugs_are_unique() -> None:
    assert len({rule.id for rule in BUILTIN.rules}) == len(BUILTIN.rules)
    assert len({rule.slug for rule in BUILTIN.rules}) == len(BUILTIN.rules)


@pytest.mark.parametrize("rule", BUILTIN.rules, ids=lambda rule: rule.id)
def test_every_param_a_rule_reads_is_in_data_json(rule: object) -> None:
    from trainlint.packs import RuleMeta

    assert isinstance(rule, RuleMeta)
    short = rule.package.rsplit(".", 1)[-1]
    source = BUILTIN.modules[short + ".rego"]
    code = "\n".join(line for line in source.splitlines() if not line.startswith("#"))
    used = set(re.findall(r"(?<![.\w])params\.(\w+)", code))
    assert used <= set(_params(rule.package)), "thresholds live in data.json"
    assert not used or f"params := data.trainlint.params.{short}\n" in source


# Parameter blocks that are not a rule's: the estimator's assumptions (EstimateParams, published by
# packs.load_pack).
NON_RULE_PARAMS = {"estimate"}


def test_data_json_has_no_params_for_unknown_rules() -> None:
    packages = {rule.package.rsplit(".", 1)[-1] for rule in BUILTIN.rules}
    assert set(BUILTIN.data["trainlint"]["params"]) <= packages | NON_RULE_PARAMS


def test_function_names_are_unique_across_modules() -> None:
    """regopy mis-evaluates (or crashes on) same-named functions in different packages."""
    seen: dict[str, str] = {}
    for file, source in BUILTIN.modules.items():
        for name in re.findall(r"^([A-Za-z_]\w*)\(", source, re.MULTILINE):
            assert seen.setdefault(name, file) == file, f"{name} in {seen[name]} and {file}"


def test_modules_never_include_tests() -> None:
    assert BUILTIN.tests
    assert not [name for name in BUILTIN.modules if name.endswith("_test.rego")]
    assert {module_package(src) for src in BUILTIN.modules.values()} >= {"trainlint.lib.fmt"}


def test_builtin_pack_is_loaded_once() -> None:
    assert load_builtin_pack() is BUILTIN


def test_get_rule_by_id_slug_or_package() -> None:
    rule = BUILTIN.get_rule("TL201")
    assert rule is not None and rule.slug == "checkpoint-too-frequent"
    assert BUILTIN.get_rule("tl201") is rule
    assert BUILTIN.get_rule("checkpoint-too-frequent") is rule
    assert BUILTIN.get_rule("checkpoint_too_frequent") is rule
    assert BUILTIN.get_rule("TL999") is None


def _pack_with(tmp_path: Path, metadata: str, body: str = BODY) -> Path:
    (tmp_path / "sample_rule.rego").write_text(metadata + body)
    return tmp_path / "sample_rule.rego"


def test_valid_metadata_loads(tmp_path: Path) -> None:
    _pack_with(tmp_path, GOOD_METADATA)
    pack = load_pack(tmp_path)
    assert [rule.id for rule in pack.rules] == ["X001"]
    assert pack.data == {} and pack.name == tmp_path.name


@pytest.mark.parametrize(
    ("metadata", "complaint"),
    [
        ("", "needs a METADATA block"),
        (GOOD_METADATA.replace("#   id: X001\n", ""), "custom.id"),
        (GOOD_METADATA.replace("warning", "critical"), "custom.severity"),
        (GOOD_METADATA.replace("#   remediation: Do the other thing.\n", ""), "remediation"),
        (GOOD_METADATA.replace("# description: Something worth knowing.\n", ""), "description"),
        (GOOD_METADATA.replace("sample-rule", "other-rule"), "does not match title"),
        (GOOD_METADATA.replace("sample-rule", "Sample Rule"), "slug"),
        (GOOD_METADATA.replace("# custom:", "# custom: [1, 2"), "not valid YAML"),
        ("# METADATA\n# just text\n", "must be a YAML mapping"),
    ],
)
def test_malformed_metadata_names_the_file(tmp_path: Path, metadata: str, complaint: str) -> None:
    file = _pack_with(tmp_path, metadata)
    with pytest.raises(PolicyError, match=re.escape(str(file))) as error:
        load_pack(tmp_path)
    assert complaint in str(error.value)


def test_duplicate_id_is_refused(tmp_path: Path) -> None:
    _pack_with(tmp_path, GOOD_METADATA)
    other = GOOD_METADATA.replace("sample-rule", "other-rule")
    (tmp_path / "other_rule.rego").write_text(other + BODY.replace("sample_rule", "other_rule"))
    with pytest.raises(PolicyError, match="'X001' is declared by both"):
        load_pack(tmp_path)


def test_helper_packages_need_no_metadata(tmp_path: Path) -> None:
    (tmp_path / "lib.rego").write_text("package trainlint.lib.util\n\nimport rego.v1\n")
    assert load_pack(tmp_path).rules == ()


def test_bad_data_json_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "data.json").write_text("{not json")
    with pytest.raises(PolicyError, match=r"data\.json: invalid JSON"):
        load_pack(tmp_path)
    (tmp_path / "data.json").write_text(json.dumps([1]))
    with pytest.raises(PolicyError, match="must hold a JSON object"):
        load_pack(tmp_path)


def test_missing_pack_directory(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="policy pack not found"):
        load_pack(tmp_path / "nope")


def test_every_metadata_problem_of_every_rule_is_reported_at_once(tmp_path: Path) -> None:
    """A pack author fixes them all in one pass: each problem with its file and line."""
    first = _pack_with(
        tmp_path, GOOD_METADATA.replace("#   id: X001\n", "").replace("warning", "critical")
    )
    second = tmp_path / "other_rule.rego"
    other = GOOD_METADATA.replace("sample-rule", "other-rule").replace("X001", "X002")
    other = other.replace("# description: Something worth knowing.\n", "")
    second.write_text(other + BODY.replace("sample_rule", "other_rule"))
    with pytest.raises(PolicyError) as error:
        load_pack(tmp_path)
    message = str(error.value)
    assert "3 METADATA problems" in message
    assert f"{first}:4: METADATA custom.id is missing" in message  # at `custom:`, its parent
    assert f"{first}:5: METADATA custom.severity 'critical' is not one of" in message
    assert f"{second}:1: METADATA description is missing" in message  # at `# METADATA`
