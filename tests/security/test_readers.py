"""Hostile files against the readers (issue 15, items 5, 10, 11 and 18).

Every reader is bounded before it allocates, a secret never reaches a fact, an absurd number
is unknown rather than infinite, and a malformed file is a located TL901, never an internal
error.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from tests.estimate.jobs import make_job
from trainlint import cli
from trainlint.estimate import EstimateParams, estimate
from trainlint.lint import check
from trainlint.read import read_file
from trainlint.sources import read_document
from trainlint.sources.base import Document, Input
from trainlint.sources.base.redact import redact_text, redact_value, secret_name
from trainlint.sources.shell import Script, Word, parse_inline, parse_script

# A 100,000-character value built in five lines (the per-value cap), then reused.
_SEED = "A=xxxxxxxxxx\n" + "A=$A$A$A$A$A$A$A$A$A$A\n" * 4


def _expanded(script: Script) -> int:
    """Characters the reader handed out: every word and every assignment value."""
    words = sum(len(w.text or "") for c in script.commands for w in c.words)
    return words + sum(len(a.value or "") for a in script.assignments)


def _peak_mib(text: str) -> float:
    tracemalloc.start()
    try:
        parse_script(text)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


# --- item 5: shell expansion is bounded before it allocates --------------------------------


def test_a_long_join_of_a_capped_value_is_refused_before_it_is_built() -> None:
    """``B=$A$A…`` 400 times: the join was built (40 MB) and only then found too long."""
    assert _peak_mib(_SEED + "B=" + "$A" * 400 + "\n") < 8


def test_many_assignments_of_large_values_stop_at_the_scripts_budget() -> None:
    """``B=$A$A`` 300 times under the per-value cap: each kept 100 KB (30 MB in all)."""
    script = parse_script(_SEED.replace("A=$A$A$A$A$A$A$A$A$A$A\n", "A=$A$A$A$A$A\n", 1)
                          + "B=$A$A\n" * 300)  # fmt: skip
    assert _expanded(script) < 4_000_000
    assert script.assignments[-1].value is None  # past the budget: unknown, not built


def test_unquoted_expansion_splits_into_a_bounded_number_of_words() -> None:
    """``echo $A $A …`` with A = 50,000 words: each reference split into 50,000 new words."""
    text = 'A="' + "x " * 5000 + '"\n' + "A=$A$A$A$A$A$A$A$A$A$A\n" + "echo" + " $A" * 20 + "\n"
    (command,) = parse_script(text).commands
    assert len(command.args) < 100_000


def test_quoted_references_to_a_large_value_count_against_the_budget() -> None:
    """Shared references cost nothing to build but everything to the readers after them."""
    script = parse_script(_SEED + "echo" + ' "$A"' * 200 + "\n")
    assert _expanded(script) < 4_000_000
    assert script.commands[-1].args[-1].text is None


def test_array_doubling_is_refused_before_the_copy() -> None:
    script = parse_script("A=(x)\n" + 'A+=("${A[@]}")\n' * 40 + 'echo "${A[@]}"\n')
    assert len(script.commands[-1].args) <= 10_000


def test_an_inline_script_gets_a_budget_in_proportion_to_its_text() -> None:
    """``bash -c "$X"`` 20,000 times re-read a short doubling chain into 100 KB each time."""
    chain = "A=xxxxxxxxxx;" + "A=$A$A$A$A$A$A$A$A$A$A;" * 4 + "torchrun $A"
    (command,) = parse_inline(Word(chain, '"$X"', 3, 9))
    assert command.args[0].text is None
    assert parse_inline(Word("A=x;torchrun $A$A", "", 1, 1))[0].args[0].text == "xx"


def test_a_branch_scope_starts_empty_rather_than_copying_every_variable() -> None:
    """12,000 variables then 10,000 ``if`` blocks copied the table 10,000 times (15 s)."""
    from trainlint.sources.shell.words import Variables

    table = Variables({f"V{i}": "1" for i in range(1000)})
    scope = table.copy()
    scope.assign("V1", "2")
    assert scope.values == {"V1": "2"} and scope.get("V2") == (True, "1")
    assert scope.changed() == {"V1"} and table.get("V1") == (True, "1")


def test_bounded_expansion_keeps_ordinary_values() -> None:
    script = parse_script(
        'BASE=/data/run\nOUT="${BASE}/out"\nARGS=(--a 1 --b "$OUT")\n'
        'torchrun --nproc_per_node $((4*2)) train.py "${ARGS[@]}" ${OUT:-x}/ckpt\n'
    )
    assert [w.text for w in script.commands[0].args] == [
        "--nproc_per_node", "8", "train.py", "--a", "1", "--b", "/data/run/out",
        "/data/run/out/ckpt",
    ]  # fmt: skip


# --- item 10: secrets the redaction missed ---------------------------------------------------

_WEBHOOK = "https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/aBcDeFgHiJkLmNoPqRsTuVwX"
_SECRETS = ("hunter2db", "redisauth77", "octocat:credpw", "plainhf77", "aBcDeFgHiJkLmNoPqRsTuVwX",
            "cmdpass77", "k8spass77", "camelhf77", "999777555")  # fmt: skip


def _leaks(output: str) -> list[str]:
    return [secret for secret in _SECRETS if secret in output]


@pytest.mark.parametrize(
    "name",
    ["DB_PASS", "MY_PASS", "--db_pass", "REDIS_AUTH", "GH_CREDS", "AWS_CREDS_FILE", "HFTOKEN",
     "hfToken", "myHfToken", "SLACK_WEBHOOK", "SLACK_WEBHOOK_URL", "SENTRY_DSN",
     "authorization", "dbPassword"],
)  # fmt: skip
def test_credential_names_the_audit_found_are_secret(name: str) -> None:
    assert secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["TOKENIZERS_PARALLELISM", "max_tokens", "--max_tokens", "--input_key", "data.prompt_key",
     "--mm_use_im_patch_token", "mmUseImPatchToken", "inputKey", "PAD_TOKEN_ID", "--chosen_key",
     "keyword", "--pass_through", "bypass", "--num_passes", "author", "--auth_type",
     "credit", "--webhook_timeout"],
)  # fmt: skip
def test_harmless_names_stay_readable(name: str) -> None:
    assert not secret_name(name)


def test_a_script_shows_none_of_the_audits_secrets() -> None:
    text = (
        "export DB_PASS=hunter2db\nexport REDIS_AUTH=redisauth77\nexport GH_CREDS=octocat:credpw\n"
        f"export HFTOKEN=plainhf77\nexport NOTIFY={_WEBHOOK}\nexport DB_PASSWORD=999777555\n"
        "export TOKENIZERS_PARALLELISM=false\n"
        "torchrun --nproc_per_node 8 train.py --max_steps 10 --db_pass cmdpass77 "
        f"--hfToken camelhf77 --report {_WEBHOOK} --input_key question "
        "--mm_use_im_patch_token False --max_tokens 512\n"
    )
    doc = read_document(Input("run.sh", text))
    assert isinstance(doc, Document) and _leaks(repr(doc)) == []
    facts = {f.pointer: f.value for f in doc.facts}
    assert facts["/env/NOTIFY"] == "https://hooks.slack.com/services/<redacted>"
    assert facts["/env/TOKENIZERS_PARALLELISM"] == "false"
    command = facts["/launcher/command"]
    assert "--input_key question --mm_use_im_patch_token False --max_tokens 512" in command


def test_a_launch_that_is_no_training_run_says_why_without_its_secret() -> None:
    """Found by hypothesis: a launch of an unknown entry is no job, and the reason quoted the
    entry word for word, token and all (``show --files`` printed it)."""
    token = "hf_" + "abcdefghijklmnopqrstuvwxyz123456"
    doc = read_document(Input("run.sh", f"#!/bin/bash\ntorchrun HF_TOKEN={token} export\n"))
    assert isinstance(doc, Document) and doc.purpose is not None
    assert token not in repr(doc) and "<redacted>" in doc.purpose


_PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: t}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: x
            command: [torchrun, --nproc_per_node, "8", train.py, --max_steps, "100"]
            env:
            - {name: MY_PASS, value: k8spass77}
            - {name: myHfToken, value: camelhf77}
            - {name: HOOK, value: "<<WEBHOOK>>"}
            resources: {limits: {nvidia.com/gpu: 8}}
""".replace("<<WEBHOOK>>", _WEBHOOK)


def test_kubernetes_container_env_goes_through_redaction(in_tmp: Path) -> None:
    """``show`` and ``check --format json`` print every job: no secret of the manifest."""
    (in_tmp / "job.yaml").write_text(_PYTORCHJOB)
    shown = CliRunner().invoke(cli.main, ["show", "job.yaml"], catch_exceptions=False)
    checked = CliRunner().invoke(cli.main, ["check", "--format", "json", "job.yaml"])
    assert '"MY_PASS": "<redacted>"' in shown.output
    assert _leaks(shown.output) == [] and _leaks(checked.output) == []


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("t.py --push_to_hub --hub_token abcdefgh", "t.py --push_to_hub --hub_token <redacted>"),
        ("mpirun -x A=1 -x DB_PASS=pw123 -np 8", "mpirun -x A=1 -x DB_PASS=<redacted> -np 8"),
        ("run --env=A=1,DB_PASS=xyz", "run --env=A=1,DB_PASS=<redacted>"),
        ("HF_TOKEN=${HF_TOKEN:-abc} x --hub_token $T", "HF_TOKEN=<redacted> x --hub_token $T"),
        ('x --token "unclosed value', "x --token <redacted>"),
    ],
)  # fmt: skip
def test_a_secret_pair_after_a_switch_or_an_operand_is_found(line: str, shown: str) -> None:
    """Each word is tried as a name: a switch no longer pairs with the secret's name and hides
    its value (``--push_to_hub --hub_token x`` showed x)."""
    assert redact_text(line) == shown


def test_pairs_are_found_in_linear_time_on_a_hostile_command_line() -> None:
    """Trying every word as a name must not rescan the rest of the line from each: 400,000
    ``a=`` pairs took minutes with a value pattern that ran to the end of the word."""
    line = "--max_tokens 8 " + "a=" * 400_000 + " DB_PASS=x"
    assert redact_text(line) == line.replace("DB_PASS=x", "DB_PASS=<redacted>")


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ("https://discord.com/api/webhooks/123456789012/AbCdEfGhIjKlMnOpQrStUv-wxyz",
         "https://discord.com/api/webhooks/<redacted>"),
        ("https://acct.blob.core.windows.net/c/x.bin?sv=2022-11-02&sig=AbCdEf0123456789%2Bxyz",
         "https://acct.blob.core.windows.net/c/x.bin?sv=2022-11-02&sig=<redacted>"),
        ("https://example.com/hook?token=AbCdEf012345&mode=x",
         "https://example.com/hook?token=<redacted>&mode=x"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
         "<redacted>"),
        ("https://huggingface.co/meta-llama/Llama-3-8B?revision=main",
         "https://huggingface.co/meta-llama/Llama-3-8B?revision=main"),
    ],
)  # fmt: skip
def test_credential_shaped_values_under_harmless_names(value: str, kept: str) -> None:
    assert redact_value("NOTIFY", value) == kept
    assert redact_text(f"python x.py --url {value}") == f"python x.py --url {kept}"


# --- item 11: an absurd number is unknown, not infinite --------------------------------------

_SFT = """\
model_name_or_path: meta-llama/Meta-Llama-3-8B
per_device_train_batch_size: 4
max_steps: {steps}
save_steps: 10
logging_steps: 1
"""
_RUN = "#!/bin/bash\n#SBATCH --gres=gpu:8\ntorchrun --nproc_per_node 8 train.py sft.yaml\n"


def _numbers(value: object) -> Iterator[float]:
    """Every number in a (dumped) estimate."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value) if abs(value) < 1e300 else math.inf
    elif isinstance(value, dict):
        for item in value.values():
            yield from _numbers(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _numbers(item)


@pytest.mark.parametrize("steps", ["1e308", "1.7e308", "1e30", "1e16", str(10**400)])
def test_an_absurd_run_length_leaves_the_run_unknown_and_the_job_checked(
    in_tmp: Path, steps: str
) -> None:
    (in_tmp / "sft.yaml").write_text(_SFT.format(steps=steps))
    (in_tmp / "run.sh").write_text(_RUN)
    report = check([Path(".")])
    assert report.errors == []
    assert {f.rule for f in report.findings} >= {"TL106", "TL301"}
    (job,) = report.jobs
    assert job.estimates is not None and job.estimates.run.steps is None
    assert "training.max_steps" in job.estimates.unknown
    assert all(math.isfinite(x) for x in _numbers(job.estimates.model_dump()))
    result = CliRunner().invoke(cli.main, ["check", "."])
    assert result.exit_code == 1, result.output


@pytest.mark.parametrize(
    "params",
    [
        {"prices": {"H100": 1e308}},
        {"overhead_bytes": 1e308},
        {"checkpoint_write_bytes_per_s": 1e-300},
        {"network_bytes_per_s": 1e-300},
        {"gpu_mtbf_hours": 1e-300},
        {"gpus_per_node": 10**30},
        {"max_alternatives": 10**30},
    ],
)  # fmt: skip
def test_a_pack_cannot_set_an_assumption_that_overflows(params: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        EstimateParams.model_validate(params)


def test_measured_step_times_and_stated_counts_are_bounded_at_the_input() -> None:
    job = make_job(
        model={"name": "meta-llama/Meta-Llama-3-8B", "seq_len": 4096},
        resources={"gpus_per_node": 10**300, "nodes": 10**300,
                   "gpu": {"model": "H100", "memory_bytes": 10**300}},
        training={"max_steps": 10**300, "micro_batch_size": 4, "epochs": 1e308,
                  "dataset_tokens": 10**300},
        checkpoint={"every_steps": 1e-308, "keep_last": 10**300},
    )  # fmt: skip
    assert estimate(job).run.steps is None
    job = make_job(
        model={"name": "meta-llama/Meta-Llama-3-8B", "seq_len": 4096},
        resources={"gpus_per_node": 8, "gpu": {"model": "H100"}},
        training={"max_steps": 1000, "micro_batch_size": 4},
        checkpoint={"every_steps": 10, "keep_last": 10**300},
        measurements={"fresh": True,
                      "world_sizes": {"8": {"step_time_s": {"median": 1.7e308}}}},
    )  # fmt: skip
    estimates = estimate(job)
    assert estimates.step_time_s is not None and estimates.step_time_s < 1e300
    assert all(math.isfinite(x) for x in _numbers(estimates.model_dump()))


# --- item 18: malformed files are located errors or plain configs, never internal errors ------


def _read(folder: Path, name: str, text: str) -> Document:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    doc = read_file(path)
    assert isinstance(doc, Document)
    assert not any("internal error" in e.message for e in doc.errors), doc.errors
    return doc


@pytest.mark.parametrize("text", ["# @package _global_\n", "# @package _global_\n---\n"])
def test_a_hydra_file_of_comments_only_is_an_empty_config(tmp_path: Path, text: str) -> None:
    doc = _read(tmp_path, "configs/experiment/exp.yaml", text)
    assert doc.format == "hydra" and doc.errors == [] and doc.facts == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [("# @package _global_\n- a\n- b\n", "a list"), ("# @package _global_\n5\n", "a single value")],
)
def test_a_hydra_file_that_is_not_a_mapping_is_a_located_error(
    tmp_path: Path, text: str, kind: str
) -> None:
    (error,) = _read(tmp_path, "configs/experiment/exp.yaml", text).errors
    assert error.message == f"a Hydra config is a mapping of keys, not {kind}"
    assert (error.line, error.column) == (2, 1)


_TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: t}
spec:
  runtimeRef:
    name: [x]
  trainer:
    numNodes: 2
    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}
"""


@pytest.mark.parametrize("name", ["[x]", "{a: b}", "7", "null", "true"])
def test_a_trainjob_runtime_name_that_is_no_string_names_no_runtime(
    tmp_path: Path, name: str
) -> None:
    text = _TRAINJOB.replace("[x]", name) + (
        "---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
        "metadata: {name: x}\nspec: {mlPolicy: {numNodes: 5}}\n"
    )
    doc = _read(tmp_path, "trainjob.yaml", text)
    facts = {f.pointer: f.value for f in doc.facts}
    assert doc.errors == [] and facts["/resources/world_size"] == 16


# --- left by the file-system audit to the Hydra reader (issue 15, item 16's last hole) ---------


def test_a_hydra_group_file_linked_out_of_the_repository_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``conf/model/evil.yaml -> /outside/evil.yaml``: the defaults list composed it; a link
    inside the repository is still followed."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    (repo / "conf" / "model").mkdir(parents=True)
    outside.mkdir()
    (outside / "evil.yaml").write_text("# @package _global_\ntrainer:\n  max_steps: 31337\n")
    (repo / "shared.yaml").write_text("# @package _global_\ntrainer:\n  devices: 4\n")
    (repo / "conf" / "model" / "evil.yaml").symlink_to(outside / "evil.yaml")
    (repo / "conf" / "model" / "ours.yaml").symlink_to(repo / "shared.yaml")
    config = "defaults:\n  - model: {}\n  - _self_\ntrainer:\n  max_epochs: 3\n"
    monkeypatch.chdir(repo)
    for model, expected in (("evil", None), ("ours", 4)):
        (repo / "conf" / "config.yaml").write_text(config.format(model))
        doc = read_document(Input("conf/config.yaml", (repo / "conf/config.yaml").read_text()))
        facts = {f.pointer: f.value for f in doc.facts} if isinstance(doc, Document) else {}
        assert facts.get("/training/max_steps") is None
        assert facts.get("/resources/gpus_per_node") == expected
