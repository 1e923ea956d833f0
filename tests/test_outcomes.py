"""An honest outcome for every file (issue 14): part of a job, skipped with a reason, or a GPU
workload not understood (TL907, errors under ``--strict``); trainlint's own files are never
inputs; TL904 only for files the job's tool looks for in the repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from trainlint.cli import main
from trainlint.config import git_top
from trainlint.lint import CheckOptions, check, load

MONOREPO = REPO / "tests" / "fresh" / "repos" / "monorepo"
RAY_CLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: train}
spec:
  headGroupSpec:
    template:
      spec:
        containers:
          - name: ray-head
            resources: {limits: {nvidia.com/gpu: 4}}
"""
TRAIN = "#!/bin/bash\n#SBATCH --time=1:00:00\ntorchrun --nproc_per_node 2 train.py --max_steps 9\n"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_infrastructure_files_of_a_monorepo_are_never_warnings_or_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GitLab CI, CloudFormation, Ansible vault, HyperPyYAML, a Helm chart, compose and
    mkdocs files next to a training job: exit 0, and no finding above info on any of them."""
    monkeypatch.chdir(MONOREPO)
    code, output = run("check", ".", "--format", "json")
    findings = json.loads(output)["findings"]
    top = git_top(MONOREPO)  # paths are relative to the git work tree holding the folder
    prefix = f"{MONOREPO.relative_to(top).as_posix()}/" if top is not None else ""
    # The one warning is a training job's: the Volcano Job (read since issue 18) holds 8 GPUs
    # with no deadline. No infrastructure file gets one.
    warned = {(f["file"], f["rule"]) for f in findings if f["severity"] != "info"}
    assert warned == {(f"{prefix}k8s/volcano-resnet-train.yaml", "TL403")}
    assert code == 1
    # The Volcano Job and the HyperPyYAML hparams are read since issue 18: nothing unread.
    assert {f["file"] for f in findings if f["rule"] == "TL907"} == set()


def test_show_files_gives_every_file_its_outcome_and_reason(in_tmp: Path) -> None:
    write(in_tmp, {
        "train.slurm": TRAIN, "raycluster.yaml": RAY_CLUSTER, "eval.sh": "python eval.py --x 1\n",
        "notes.json": "{\n  // a comment\n}\n", "setup.py": "print('hi')\n",
    })  # fmt: skip
    code, output = run("show", "--files", ".")
    outcomes = {f["path"]: (f["outcome"], f["reason"]) for f in json.loads(output)["files"]}
    assert code == 0
    assert outcomes["train.slurm"] == ("job", "roots its own job")
    assert outcomes["raycluster.yaml"][0] == "unsupported"
    assert outcomes["eval.sh"] == ("skipped", "runs eval.py: evaluation, not training")
    assert outcomes["notes.json"][1].startswith("not a training config, and not valid")
    assert outcomes["setup.py"][0] == "skipped"


def test_the_summary_counts_workloads_not_understood_and_strict_fails_on_them(
    in_tmp: Path,
) -> None:
    write(in_tmp, {"train.slurm": TRAIN, "raycluster.yaml": RAY_CLUSTER})
    code, output = run("check", ".", "--select", "TL907")
    assert code == 0
    assert output.endswith("Found 1 finding (1 info) in 1 job; 1 file not understood.\n")
    assert "raycluster.yaml:10:34: TL907 [info] not understood: Kubernetes RayCluster" in output
    code, output = run("check", ".", "--select", "TL907", "--strict")
    assert code == 1 and "TL907 [error]" in output


def test_an_inline_ignore_silences_the_notice(in_tmp: Path) -> None:
    write(
        in_tmp,
        {"raycluster.yaml": "# trainlint: ignore-file[TL907] checked elsewhere\n" + RAY_CLUSTER},
    )
    report = check([Path(".")], CheckOptions(select=["TL907"]))
    assert [f.suppression.kind for f in report.findings if f.suppression] == ["file"]


def test_its_own_report_and_baseline_are_never_inputs(in_tmp: Path) -> None:
    write(in_tmp, {"run.sh": "torchrun --nproc_per_node 8 train.py --logging_steps 1\n"})
    first = run("check", ".", "--format", "json", "-o", "report.json")
    second = run("check", ".", "--format", "sarif", "-o", "out/report.sarif.json")
    third = run("check", ".", "--format", "json")
    assert first[0] == second[0] == third[0] == 1
    report = json.loads(third[1])
    assert [job["id"] for job in report["jobs"]] == ["run.sh"]  # report.json is no job
    assert {f["file"] for f in report["findings"]} == {"run.sh"}
    files = {f.path: f.reason for f in load([Path(".")]).files}
    assert "own output" in files["report.json"] and "own output" in files["out/report.sarif.json"]


def test_a_broken_file_a_job_references_is_that_jobs_tl901(in_tmp: Path) -> None:
    write(in_tmp, {
        "run.sh": "#!/bin/bash\ntorchrun --nproc_per_node 2 train.py --config conf.yaml\n",
        "conf.yaml": "model: [unclosed\n", "other.yaml": "a: [unclosed\n",
    })  # fmt: skip
    report = check([Path(".")], CheckOptions(select=["TL901"]))
    assert [(f.rule, f.file, f.job) for f in report.findings] == [("TL901", "conf.yaml", "run.sh")]


def test_system_and_home_paths_are_unresolved_not_missing(in_tmp: Path) -> None:
    write(in_tmp, {"run.sh": (
        "#!/bin/bash\nsource /etc/profile.d/modules.sh\nsource ~/setup_env.sh\n"
        ". parse_options.sh\nsource scripts/env.sh\n"
        "torchrun --nproc_per_node 2 train.py --deepspeed /opt/ds/zero3.json\n"
    )})  # fmt: skip
    [job] = load([Path(".")]).jobs
    assert [m.path for m in job.missing_references] == ["scripts/env.sh"]  # in the repo: TL904
    assert {u.path: u.reason.split(",")[0] for u in job.unresolved_references} == {
        "/etc/profile.d/modules.sh": "an absolute path",
        "~/setup_env.sh": "a path in a home folder",
        "parse_options.sh": "a bare name the shell may find on PATH",
        "/opt/ds/zero3.json": "an absolute path",
    }


@pytest.mark.parametrize("app_in_repo", [True, False])
def test_hydra_config_path_resolves_beside_the_app(in_tmp: Path, app_in_repo: bool) -> None:
    """``python -m verl.trainer.main_ppo --config-path=config``: Hydra looks beside the app's
    file, not beside the script; an app that is not in the repository (installed) cannot be
    checked, so its config is unresolved rather than missing."""
    files = {"examples/run.sh": (
        "#!/bin/bash\npython3 -m verl.trainer.main_ppo --config-path=config "
        "--config-name=ppo_trainer trainer.n_gpus_per_node=8 trainer.total_epochs=3\n"
    )}  # fmt: skip
    if app_in_repo:
        files["verl/trainer/main_ppo.py"] = "# the app\n"
        files["verl/trainer/config/ppo_trainer.yaml"] = "trainer:\n  total_epochs: 1\n"
    write(in_tmp, files)
    [job] = load([Path(".")]).jobs
    assert job.missing_references == []
    sources = [s.path for s in job.sources]
    if app_in_repo:
        assert sources == ["examples/run.sh", "verl/trainer/config/ppo_trainer.yaml"]
    else:
        [unresolved] = job.unresolved_references
        assert unresolved.path == "verl/trainer/config/ppo_trainer.yaml"
        assert "verl/trainer/main_ppo.py, which is not in the repository" in unresolved.reason


def test_a_training_launch_is_the_launcher_not_the_server_beside_it(in_tmp: Path) -> None:
    write(in_tmp, {
        "train.slurm": (
            "#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --time=2:00:00\n"
            "srun --nodes=1 trl vllm-serve --model Qwen/Qwen2.5-7B &\n"
            "accelerate launch --num_processes 7 src/grpo.py --max_steps 100\n"
        ),
        "serve.slurm": "#!/bin/bash\n#SBATCH --gres=gpu:8\nsrun vllm serve Qwen/Qwen2.5-7B\n",
        "eval.slurm": "#!/bin/bash\n#SBATCH --gres=gpu:8\nlighteval vllm model.yaml tasks\n",
    })  # fmt: skip
    loaded = load([Path(".")])
    assert [(j.id, j.launcher.kind, j.launcher.entrypoint) for j in loaded.jobs] == [
        ("train.slurm", "accelerate", "src/grpo.py")
    ]
    reasons = {f.path: f.reason for f in loaded.files if f.outcome == "skipped"}
    assert reasons == {
        "eval.slurm": "runs lighteval: evaluation, not training",
        "serve.slurm": "runs vllm: serving, not training",
    }


def test_a_batch_script_holding_gpus_is_a_job_whatever_it_runs(in_tmp: Path) -> None:
    """TL401 and TL403 read facts: an 8-GPU sbatch script running fairseq-train is checked."""
    write(in_tmp, {"train.sbatch": (
        "#!/bin/bash\n#SBATCH --gres=gpu:a100:8\nfairseq-train data-bin --arch transformer\n"
    )})  # fmt: skip
    report = check([Path(".")], CheckOptions(select=["TL401", "TL403"]))
    assert sorted(f.rule for f in report.findings) == ["TL401", "TL403"]
    assert report.jobs[0].launcher.kind == "fairseq-train"


def test_an_annotated_config_holds_gpus_however_launched(in_tmp: Path) -> None:
    write(in_tmp, {"lora.yml": (
        "# trainlint: gpu=A100-40GB gpus=1\nbase_model: NousResearch/Meta-Llama-3-8B\n"
        "adapter: lora\nmicro_batch_size: 2\nnum_epochs: 3\n"
    )})  # fmt: skip
    [finding] = check([Path(".")], CheckOptions(select=["TL401"])).findings
    assert (
        finding.message
        == "missing cost tags: team, project; GPU spend of this job cannot be attributed"
    )
