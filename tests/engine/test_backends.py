"""Every backend gives the same findings for every builtin rule, and fails the same way.

The jobs below are chosen so that each rule fires on some and stays quiet on others, with
unknown (null) values, boundary values, very large and very small numbers, and strings that
need escaping: the places where the two engines were seen to differ.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trainlint import engine as engine_module
from trainlint.engine import (
    DEFAULT_ENGINE,
    ENGINES,
    Backend,
    Engine,
    available_engines,
    create_engine,
)
from trainlint.engine.results import normalise
from trainlint.engine.watchdog import GuardedEngine, shipped
from trainlint.errors import PolicyError
from trainlint.job import Job
from trainlint.packs import load_builtin_pack, load_pack

SOURCES = [{"path": "train.sh", "format": "shell", "role": "entrypoint"}]
RULES = {rule.package.rsplit(".", 1)[-1] for rule in load_builtin_pack().rules}


def _job(job_id: str, **fields: Any) -> dict[str, Any]:
    return Job.model_validate({"id": job_id, "sources": SOURCES, **fields}).as_input()


WASTEFUL = _job(
    "wasteful",
    launcher={"kind": "torchrun", "entrypoint": "train.py"},
    resources={
        "gpu": {"model": "H100-80GB", "memory_bytes": 85_899_345_920},
        "world_size": 8,
        "time_limit_s": 3_000_000.0,  # ~833 h against a ~39 h run: TL405
    },
    training={"max_steps": 100_000, "precision": "bf16"},
    checkpoint={"every_steps": 10, "keep_last": None, "export_hf": True},
    logging={
        "every_steps": 1,
        "level": "DEBUG",
        "per_step_diagnostics": {"params_norm": True, "num_zeros_in_grad": True},
    },
    env={"NCCL_DEBUG": "info", "TORCH_DISTRIBUTED_DEBUG": "DETAIL", "OMP_NUM_THREADS": "8"},
    tags={"team": "ml"},
    parse_errors=[{"file": "a.yaml", "line": 3, "column": 1, "message": "bad indentation"}],
    estimates={
        "gpu": "H100-SXM-80GB",
        "gpus": 8,
        "memory": {"utilization": 0.23, "total_bytes": 2e10, "gpu_bytes": 85_899_345_920},
        "step_time_s": 1.2,
        "price_per_gpu_hour": 4.0,
        "run": {"steps": 100_000, "hours": 38.75, "gpu_hours": 310.0, "usd": 1240.0},
        "checkpoint": {
            "size_bytes": 112e9,
            "save_s": 19.0,
            "every_steps": 10,
            "saves": 10_000,
            "overhead_fraction": 0.613,
            "overhead_gpu_hours": 190.1,
            "overhead_usd": 760.4,
            "suggested_every_steps": 160,
        },
        "alternatives": [
            {
                "gpu": "A100-40GB",
                "gpus": 8,
                "memory_utilization": 0.6,
                "usd": 900.0,
                "gpu_hours": 300.0,
            },
            {
                "gpu": "L40S",
                "gpus": 4,
                "memory_utilization": 0.71,
                "usd": 450.0,
                "gpu_hours": 350.0,
            },
        ],
        "sources": {"step_time_s": "measured", "checkpoint.save_s": "estimated"},
    },
)
CLEAN = _job(
    "clean",
    launcher={"kind": "deepspeed"},
    resources={"gpu": {"model": "A100-80GB"}, "world_size": 16},
    checkpoint={"every_steps": 2000},
    logging={"every_steps": 50, "level": "info"},
    env={"NCCL_DEBUG": "WARN", "TORCH_DISTRIBUTED_DEBUG": "OFF"},
    tags={"team": "ml", "project": "llm"},
    estimates={
        "memory": {"utilization": 0.82},
        "run": {"steps": 50_000, "gpu_hours": 2000.0, "usd": 8000.0},
        "checkpoint": {"overhead_fraction": 0.01, "overhead_gpu_hours": 20.0, "overhead_usd": 80.0},
        "alternatives": [
            {
                "gpu": "H100-80GB",
                "gpus": 16,
                "memory_utilization": 0.8,
                "usd": 7000.0,
                "gpu_hours": 1500.0,
            }
        ],
    },
)
EMPTY = _job("empty")
UNKNOWN_RUN = _job(
    "unknown-run",
    launcher={"kind": "python"},
    logging={"every_steps": 1.0, "level": "Trace"},
    env={"NCCL_DEBUG": "TRACE", "TORCH_CPP_LOG_LEVEL": "INFO"},
    estimates={"checkpoint": {"overhead_fraction": 0.5}, "memory": {"utilization": 0.1}},
)
PARTIAL = _job(
    "partial",
    checkpoint={"every_steps": 0.1},
    logging={"every_steps": 0.05},
    training={"max_steps": 3000},
    resources={"world_size": 2},
    estimates={
        "checkpoint": {"save_s": 45.0, "overhead_fraction": 0.2, "overhead_gpu_hours": 3.3},
        "memory": {"utilization": 0.3},
        "run": {"usd": 12.5, "gpu_hours": 5.0},
        "alternatives": [{"gpu": "T4", "gpus": 1, "memory_utilization": 0.9, "usd": None}],
    },
)
BOUNDARY = _job(
    "boundary",
    launcher={"kind": "srun"},
    tags={"team": "", "project": "x"},
    logging={"every_steps": 1},
    training={"max_steps": 1000},
    checkpoint={"every_steps": 1001},
    estimates={
        "memory": {"utilization": 0.5},
        "run": {"usd": 100.0, "gpu_hours": 10.0},
        "checkpoint": {"overhead_fraction": 0.05},
        "alternatives": [
            {"gpu": "L4", "gpus": 1, "memory_utilization": 0.9, "usd": 10.0, "gpu_hours": 10.0}
        ],
    },
)
HUGE = _job(
    "huge",
    launcher={"kind": "mpirun"},
    resources={"gpu": {"model": "H100-80GB"}, "world_size": 4096},
    logging={"every_steps": 1},
    env={"TORCH_DISTRIBUTED_DEBUG": "info"},
    estimates={
        "memory": {"utilization": 0.05},
        "price_per_gpu_hour": 2.5,
        "run": {"steps": 10_000_000, "gpu_hours": 3.1e7, "usd": 7.75e7},
        "checkpoint": {
            "size_bytes": 2.3e15,
            "save_s": 86_400.0,
            "every_steps": 1000,
            "overhead_fraction": 0.97,
            "overhead_gpu_hours": 2.9e7,
            "overhead_usd": 7.3e7,
            "suggested_every_steps": 3_000_000_000,
        },
        "alternatives": [
            {
                "gpu": "B200",
                "gpus": 2048,
                "memory_utilization": 0.1,
                "usd": 5.5e7,
                "gpu_hours": 1.4e7,
            }
        ],
    },
)
TINY = _job(
    "tiny",
    resources={"gpu": {"model": "T4"}},
    logging={"every_steps": 1},
    env={"NCCL_DEBUG": "INFO"},
    estimates={
        "gpus": 1,
        "memory": {"utilization": 0.001},
        "step_time_s": 0.004,
        "price_per_gpu_hour": 0.35,
        "run": {"steps": 1_000, "gpu_hours": 0.0011, "usd": 0.000385},
        "checkpoint": {
            "size_bytes": 900.0,
            "save_s": 0.0004,
            "every_steps": 1,
            "overhead_fraction": 0.0909,
            "overhead_gpu_hours": 0.0001,
            "overhead_usd": 0.000035,
            "suggested_every_steps": 2,
        },
        "alternatives": [
            {
                "gpu": "CPU",
                "gpus": 1,
                "memory_utilization": 0.01,
                "usd": 0.0001,
                "gpu_hours": 0.0011,
            }
        ],
    },
)
AWKWARD = _job(
    "awkward",
    launcher={"kind": "accelerate"},
    resources={"gpu": {"model": 'H100 "SXM" ≥ é'}},
    logging={"level": "detail"},
    env={"NCCL_DEBUG": "Info", "TORCH_CPP_LOG_LEVEL": "<redacted>"},
    tags={"project": "p"},
    parse_errors=[
        {"file": "x.yaml", "line": 1, "column": 1, "message": 'unexpected "}" \\ at\nline 2\t≥'},
        {"file": "y.json", "line": 9, "column": 4, "message": "Expecting ',' delimiter"},
    ],
    unknown_keys=[
        {
            "file": "x.yaml",
            "line": 2,
            "column": 1,
            "key": 'sav"e',
            "format": "hf-trainer",
            "suggestion": "save_steps",
        },
        {"file": "x.yaml", "line": 3, "column": 1, "key": "gpuz", "format": "trainlint-annotation"},
    ],
    missing_references=[{"file": "run.sh", "line": 4, "column": 5, "path": "ds ≥ \\ é.json"}],
    estimates={
        "memory": {"utilization": 0.4},
        "run": {"usd": 2.0},
        "alternatives": [{"gpu": 'L4 "x"', "gpus": 1, "memory_utilization": 0.5, "usd": 1.0}],
    },
)


def _variant(base: dict[str, Any], job_id: str, **changes: Any) -> dict[str, Any]:
    """``base`` with ``changes`` merged into it, key by key at every depth."""

    def merge(old: Any, new: Any) -> Any:
        if isinstance(old, dict) and isinstance(new, dict):
            return {**old, **{k: merge(old.get(k), v) for k, v in new.items()}}
        return new

    return Job.model_validate(merge(base, {**changes, "id": job_id})).as_input()


# Measured, slow and noisy: recompute, all-reduce, a stale probe, data loading and debug aids.
SLOW = _variant(
    WASTEFUL,
    "slow",
    data={"num_workers": 0},
    eval={"strategy": "steps", "every_steps": 10},
    logging={"profiler": {"enabled": True, "scheduled": False}, "anomaly_detection": True},
    env={"CUDA_LAUNCH_BLOCKING": "1"},
    estimates={
        "memory": {"total_without_recompute_bytes": 3e10, "utilization_without_recompute": 0.35},
        "comm": {"allreduce_s": 0.9, "exposed_s": 0.5, "fraction": 0.42},
        "recompute": {"mode": "full", "step_time_without_s": 0.9, "overhead_fraction": 0.25,
                      "overhead_gpu_hours": 77.5, "overhead_usd": 310.0},
        "checkpoint": {"kept": 10_000, "storage_bytes": 1.12e15},
    },
    measurements={
        "fresh": False, "path": ".trainlint/measurements/wasteful.json",
        "measured_at": "2026-01-01T00:00:00Z", "changed": ["/training/max_steps"],
        "world_sizes": {"1": {"tokens_per_s": 1000.0},
                        "8": {"tokens_per_s": 3000, "scaling_efficiency": 0.375}},
    },
)  # fmt: skip
# fp32 at scale, with a fresh probe that found poor scaling and an out-of-memory size.
HUGE_MEASURED = _variant(
    HUGE,
    "huge-measured",
    training={"precision": "fp32"},
    estimates={"mixed_precision": {"precision": "bf16", "peak_ratio": 14.76, "step_time_s": 0.2,
                                   "speedup": 14.76, "saved_gpu_hours": 2.9e7, "saved_usd": 7.2e7}},
    measurements={"fresh": True, "world_sizes": {
        "1": {"tokens_per_s": 5e3, "scaling_efficiency": 1.0},
        "2048": {"tokens_per_s": 6e6, "scaling_efficiency": 0.586},
        "4096": {"oom": True}}},
)  # fmt: skip
# Over budget on spot capacity without checkpoints, experimental kernels, no seed.
RISKY = _job(
    "risky",
    sources=[{"path": "recipe.yaml", "format": "torchtune", "role": "config"}],
    defaults={"/training/seed": {"value": None, "format": "torchtune", "key": "seed",
                                 "file": "recipe.yaml", "line": 1, "column": 1}},
    launcher={"kind": "srun", "restart_loop": "uncapped"},
    budget={"usd": 1000.0, "gpu_hours": 300.0},
    resources={"gpu": {"model": "H100-80GB"}, "world_size": 8, "spot": True},
    checkpoint={"strategy": "no"},
    features=[
        {"name": "flash-attn", "kind": "kernel"},
        {"name": "liger", "kind": "kernel", "fallback": "off"},
        {"name": "muon", "kind": "optimizer"},
    ],
    estimates={"gpu": "H100-SXM-80GB", "gpus": 8,
               "run": {"hours": 38.75, "gpu_hours": 310.0, "usd": 1240.0}},
    # What check --db found: the same experiment elsewhere, a team budget crossed (TL406, TL407).
    platform={
        "duplicates": [{"repo": "org/r", "path": "sft.yaml", "tags": {"team": "a \"b\" ≥"}}],
        "budgets": [{"group": "team", "key": "ml", "month": "2026-12", "budget_usd": 1000.0,
                     "before_usd": 500.0, "before_gpu_hours": 125.0, "after_usd": 1740.0,
                     "after_gpu_hours": 435.0}],
    },
)  # fmt: skip
# TL905's and TL906's input: what the suppression and layering passes found (evaluated after
# the other rules).
SUPPRESSIONS = {
    "id": "suppressions",
    "lock_violations": [
        {
            "lock": "rules.TL401",
            "pack": 'a "b"',
            "detail": "ignored ≥ \\",
            "where": "the repo config",
        },
        {"lock": "params.x.y", "pack": "p", "detail": "d"},
        {"lock": None, "pack": "p", "detail": "d"},
    ],
    "suppression_problems": [
        {"kind": "inline", "problem": "unused", "detail": 'ignore[TL201] "x" ≥ \\'},
        {"kind": "waiver", "problem": "expired", "detail": "waiver for TL302 expired in 2020"},
        {"kind": "baseline", "problem": "malformed", "detail": None},
    ],
}
# Stated facts that disagree (TL108's layout, TL109's batch), and the scheduler TL403 reads.
LAYOUT = _job(
    "layout",
    launcher={"kind": "torchrun"},
    resources={"world_size": 8, "scheduler": "slurm"},
    training={"parallelism": {"tensor": 8, "pipeline": 16}, "global_batch_size": 1536,
              "micro_batch_size": 1, "grad_accum_steps": 1},
)  # fmt: skip
BATCH = _job(
    "batch",
    launcher={"kind": "deepspeed"},
    resources={"world_size": 8},
    training={"global_batch_size": 512, "micro_batch_size": 4, "grad_accum_steps": 8},
    derived=["/resources/gpus_per_node"],
)
# TL907's input: the run's GPU workloads that no format reads.
UNSUPPORTED = {
    "id": "unsupported",
    "unsupported_workloads": [
        {"file": "vcjob.yaml", "kind": 'Kubernetes Job (batch.volcano.sh/v1alpha1) "≥ \\'},
        {"file": "x.yaml", "kind": None},
    ],
}
JOBS = [WASTEFUL, CLEAN, EMPTY, UNKNOWN_RUN, PARTIAL, BOUNDARY, HUGE, TINY, AWKWARD, SLOW,
        HUGE_MEASURED, RISKY, SUPPRESSIONS, UNSUPPORTED, LAYOUT, BATCH]  # fmt: skip


@pytest.fixture(scope="module")
def engines() -> dict[str, Engine]:
    """Each installed backend, compiled once for the whole module."""
    pack = load_builtin_pack()
    return {name: create_engine(name, pack) for name in available_engines()}


@pytest.fixture(scope="module")
def results(engines: dict[str, Engine]) -> dict[str, dict[str, Any]]:
    return {name: {job["id"]: e.evaluate(job) for job in JOBS} for name, e in engines.items()}


def test_both_backends_are_installed_for_the_parity_tests() -> None:
    assert DEFAULT_ENGINE in ENGINES
    local = {name for name, backend in ENGINES.items() if not backend.remote}
    assert set(available_engines()) == local, "install trainlint[test] for parity tests"
    assert ENGINES["opa"].remote  # an OPA server: tests/packs/test_opa_backend.py


@pytest.mark.parametrize("job", JOBS, ids=lambda job: job["id"])
def test_backends_agree(job: dict[str, Any], results: dict[str, dict[str, Any]]) -> None:
    reference = results[DEFAULT_ENGINE][job["id"]]
    for name, by_job in results.items():
        assert by_job[job["id"]] == reference, f"{name} differs from {DEFAULT_ENGINE}"
        assert json.dumps(by_job[job["id"]]) == json.dumps(reference)


def test_every_rule_fires_somewhere_and_stays_quiet_somewhere(
    results: dict[str, dict[str, Any]],
) -> None:
    by_job = results[DEFAULT_ENGINE]
    for rule in RULES:
        fired = {job_id for job_id, found in by_job.items() if found[rule]}
        assert fired, f"{rule} never fires: the parity test would be vacuous"
        assert fired != set(by_job), f"{rule} fires on every job"


def test_every_rule_reports_even_when_quiet(results: dict[str, dict[str, Any]]) -> None:
    assert results[DEFAULT_ENGINE]["empty"] == {rule: [] for rule in RULES}


def test_findings_follow_the_contract(results: dict[str, dict[str, Any]]) -> None:
    for found in results[DEFAULT_ENGINE].values():
        for findings in found.values():
            keys = [(f["pointer"], f["message"]) for f in findings]
            assert keys == sorted(keys)
            for finding in findings:
                assert finding["pointer"].startswith("/")
                assert set(finding) <= {"message", "pointer", "waste"}
                waste = finding.get("waste", {"gpu_hours": 0.0, "usd": 0.0})
                assert set(waste) == {"gpu_hours", "usd"}
                assert all(type(value) is float for value in waste.values())


def test_wasteful_job_messages(results: dict[str, dict[str, Any]]) -> None:
    found = results[DEFAULT_ENGINE]["wasteful"]
    assert found["checkpoint_too_frequent"] == [
        {
            "message": "checkpoint every 10 steps: ~19 s to save 112 GB against ~1.2 s steps is "
            "~61% of the run (estimated); save every ≥ 160 steps",
            "pointer": "/checkpoint/every_steps",
            "waste": {"gpu_hours": 190.1, "usd": 760.4},
        }
    ]
    assert [f["pointer"] for f in found["debug_logging"]] == [
        "/env/NCCL_DEBUG",
        "/env/TORCH_DISTRIBUTED_DEBUG",
        "/logging/level",
    ]
    assert found["parse_error"] == [{"message": "bad indentation", "pointer": "/parse_errors/0"}]
    assert found["missing_cost_tags"][0]["message"].startswith("missing cost tag: project;")


def test_one_engine_evaluates_many_jobs_without_leaking(engines: dict[str, Engine]) -> None:
    for engine in engines.values():
        first = engine.evaluate(WASTEFUL)
        assert engine.evaluate(CLEAN) != first
        assert engine.evaluate(WASTEFUL) == first


def test_unknown_engine() -> None:
    with pytest.raises(PolicyError, match="unknown engine 'opa-wasm'; choose one of: regorus"):
        create_engine("opa-wasm", load_builtin_pack())


def test_missing_library(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = Backend("trainlint.engine.regopy_backend", "no_such_rego_lib", "pip install x")
    monkeypatch.setitem(engine_module.ENGINES, "ghost", missing)
    assert "ghost" not in available_engines()
    with pytest.raises(PolicyError, match="engine 'ghost' is not installed: pip install x"):
        create_engine("ghost", load_builtin_pack())


def _write_pack(root: Path, **modules: str) -> Path:
    for name, source in modules.items():
        (root / f"{name}.rego").write_text(source)
    return root


@pytest.mark.parametrize("name", available_engines())
def test_syntax_error_names_the_module(tmp_path: Path, name: str) -> None:
    src = "package trainlint.lib.broken\n\nimport rego.v1\n\nx := [1,\n"
    pack = load_pack(_write_pack(tmp_path, broken=src))
    with pytest.raises(PolicyError, match=rf"{name}: .*broken\.rego:\d+:\d+"):
        create_engine(name, pack)


def test_regorus_reports_unsafe_variables_when_loading(tmp_path: Path) -> None:
    src = "package trainlint.lib.unsafe\n\nimport rego.v1\n\nx := y if true\n"
    pack = load_pack(_write_pack(tmp_path, unsafe=src))
    with pytest.raises(PolicyError, match=r"regorus: .*unsafe\.rego:5:6: var y is unsafe"):
        create_engine("regorus", pack)


def test_regopy_refuses_function_arity_clashes(tmp_path: Path) -> None:
    pack = load_pack(
        _write_pack(
            tmp_path,
            a="package trainlint.lib.a\n\nimport rego.v1\n\nf(x) := x\n",
            b="package trainlint.lib.b\n\nimport rego.v1\n\nf(x, y) := x\n\nr := f(1, 2)\n",
        )
    )
    assert create_engine("regorus", pack).evaluate({}) == {}
    with pytest.raises(PolicyError, match=r"function f/2 clashes with f/1"):
        create_engine("regopy", pack)


@pytest.mark.parametrize("name", available_engines())
def test_finding_without_message_is_refused(tmp_path: Path, name: str) -> None:
    metadata = (
        "# METADATA\n# title: odd\n# description: d\n# custom:\n#   id: X1\n"
        "#   severity: info\n#   category: c\n#   remediation: r\n"
    )
    body = (
        "package trainlint.rules.odd\n\nimport rego.v1\n\n"
        'findings contains {"pointer": "/x"} if input.x\n'
    )
    engine = create_engine(name, load_pack(_write_pack(tmp_path, odd=metadata + body)))
    with pytest.raises(PolicyError, match=r"rule odd: finding .* needs a string 'message'"):
        engine.evaluate({"x": True})


@pytest.mark.parametrize("name", available_engines())
def test_only_findings_are_evaluated(tmp_path: Path, name: str) -> None:
    """A rule's helper rules run only as far as ``findings`` needs them: a helper that fails
    at run time on every job (a conflict) costs nothing unless a finding uses it, and a rule
    package without ``findings`` reports nothing rather than undefined for all."""
    metadata = (
        "# METADATA\n# title: {slug}\n# description: d\n# custom:\n#   id: {id}\n"
        "#   severity: info\n#   category: c\n#   remediation: r\n"
    )
    quiet = metadata.format(slug="quiet", id="X1") + (
        "package trainlint.rules.quiet\n\nimport rego.v1\n\n"
        'findings contains {"message": "m", "pointer": "/x"} if input.x == 1\n\n'
        "_clash := 1 if input.x\n\n_clash := 2 if input.x\n"
    )
    silent = metadata.format(slug="silent", id="X2") + (
        "package trainlint.rules.silent\n\nimport rego.v1\n\nhelper := true\n"
    )
    engine = create_engine(name, load_pack(_write_pack(tmp_path, quiet=quiet, silent=silent)))
    assert engine.evaluate({"x": 1}) == {"quiet": [{"message": "m", "pointer": "/x"}]}
    assert engine.evaluate({"x": 2}) == {"quiet": []}


@pytest.mark.parametrize("name", available_engines())
def test_the_shipped_pack_passes_the_load_check_it_skips(name: str) -> None:
    """Packs of shipped modules skip the evaluate-everything check on load (~10 ms of a
    one-file run) and the time-limited worker; this test is that check, for every backend."""
    pack = load_builtin_pack()
    assert shipped(pack.modules)
    engine = create_engine(name, pack)
    assert not isinstance(engine, GuardedEngine)
    # PolicyError if a module broke:
    type(engine)(pack, check=True)  # type: ignore[call-arg]  # a backend's __init__ takes check=


def test_normalise_makes_engine_numbers_comparable() -> None:
    assert normalise({"a": [0.30000000000000004, 2.0, 1e21, True, None]}) == {
        "a": [0.3, 2, 1e21, True, None]
    }
    assert type(normalise(2.0)) is int


def test_importing_the_engine_package_loads_no_rego_library() -> None:
    code = "import sys, trainlint.engine; print(sorted({'regorus', 'regopy'} & set(sys.modules)))"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert out.stdout.strip() == "[]"
