"""verl: its Hydra config composed as Hydra does and read with verl's keys, the launch line's
``key=value`` overrides winning key by key (``+key=`` adds, ``~key`` deletes), and those
overrides read from the launch line alone when the trainer's config is not in the repository."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainlint.assemble import assemble
from trainlint.job import Job
from trainlint.sources import read_document, verl
from trainlint.sources.base import Document, Input
from trainlint.workdir import working_directory

VERL = Path(__file__).parents[1] / "fresh" / "repos" / "verl"


def stated(job: Job, *pointers: str) -> dict[str, Any]:
    """pointer → (value, line) of what the job's files state."""
    dumped = job.model_dump()
    found: dict[str, Any] = {}
    for pointer in pointers:
        node: Any = dumped
        for part in pointer.strip("/").split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        where = job.provenance.get(pointer)
        found[pointer] = (node, where.line if where else None)
    return found


def test_the_launch_line_beats_the_config_name_it_names_and_the_config_fills_the_rest() -> None:
    """``--config-path=config --config-name=ppo_megatron_trainer.yaml`` beside main_ppo.py;
    ``trainer.total_epochs=15`` beats the config's 30, which stays the base elsewhere."""
    with working_directory(VERL):
        (job,) = assemble([Path("examples/grpo_trainer/run_qwen2-7b_math_megatron.sh")])
    assert ("verl/trainer/config/ppo_megatron_trainer.yaml", "verl") in [
        (s.path, s.format) for s in job.sources
    ]
    expected = {
        "/resources/gpus_per_node": (8, 55),
        "/resources/nodes": (1, 56),
        "/training/epochs": (15.0, 59),
        "/checkpoint/every_steps": (20, 57),
        "/eval/every_steps": (5, 58),
        "/training/parallelism/tensor": (2, 36),
        "/training/parallelism/pipeline": (2, 35),
        "/model/name": ("Qwen/Qwen2-7B-Instruct", 30),
        "/training/micro_batch_size": (4, 34),
    }
    assert stated(job, *expected) == expected
    assert job.resources.world_size == 8


def test_a_primary_verl_config_is_verl_and_reads_its_merged_view() -> None:
    path = VERL / "verl/trainer/config/ppo_trainer.yaml"
    with working_directory(VERL):
        doc = read_document(Input(str(path.relative_to(VERL)), path.read_text()))
    assert isinstance(doc, Document) and doc.format == "verl" and doc.role == "entrypoint"
    facts = {f.pointer: (f.value, f.location.file.rsplit("/", 1)[-1]) for f in doc.facts}
    assert facts["/training/epochs"] == (30.0, "ppo_trainer.yaml")
    assert facts["/checkpoint/strategy"] == ("no", "ppo_trainer.yaml")  # save_freq: -1
    assert "/checkpoint/every_steps" not in facts
    assert facts["/training/activation_checkpointing"] == (True, "hf_model.yaml")  # a group


def _app(root: Path, launch: str) -> Job:
    (root / "app" / "conf").mkdir(parents=True)
    (root / "app" / "train.py").write_text(
        '@hydra.main(config_path="conf", config_name="ppo")\ndef main(cfg): ...\n'
    )
    (root / "app" / "conf" / "ppo.yaml").write_text(
        "actor_rollout_ref:\n  model:\n    path: base/model\n"
        "trainer:\n  total_epochs: 30\n  save_freq: 10\n  n_gpus_per_node: 8\n"
    )
    (root / "run.sh").write_text(f"#!/bin/bash\n{launch}\n")
    with working_directory(root):
        (job,) = assemble([Path("run.sh")])
    return job


def test_plus_adds_a_key_and_tilde_deletes_one(tmp_path: Path) -> None:
    job = _app(tmp_path, "python app/train.py --config-path=conf --config-name=ppo "
                         "trainer.total_epochs=3 ~trainer.save_freq "
                         "+trainer.max_actor_ckpt_to_keep=2")  # fmt: skip
    assert job.training.epochs == 3
    assert job.checkpoint.every_steps is None and job.checkpoint.strategy is None
    assert job.provenance["/checkpoint/every_steps"].file == "run.sh"  # stated: deleted
    assert job.checkpoint.keep_last == 2
    assert job.model.name == "base/model" and job.resources.gpus_per_node == 8


def test_overrides_are_read_from_the_launch_line_when_the_config_is_not_here(
    tmp_path: Path,
) -> None:
    """verl's SFT trainer lives in the verl package: only the launch line states anything."""
    (tmp_path / "run.sh").write_text(
        "#!/bin/bash\ntorchrun --nproc_per_node=2 -m verl.trainer.fsdp_sft_trainer "
        "data.micro_batch_size_per_gpu=4 model.partial_pretrain=Qwen/Qwen2.5-0.5B "
        "trainer.total_epochs=1 model.lora_rank=32 trainer.save_freq=0\n"
    )
    with working_directory(tmp_path):
        (job,) = assemble([Path("run.sh")])
    assert (job.training.micro_batch_size, job.model.name, job.training.epochs) == (
        4, "Qwen/Qwen2.5-0.5B", 1.0
    )  # fmt: skip
    assert job.model.peft.rank == 32 and job.checkpoint.strategy == "no"


def test_another_program_s_overrides_are_not_verl_s(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "#!/bin/bash\ntorchrun --nproc_per_node=2 train.py trainer.n_gpus_per_node=8 "
        "trainer.total_epochs=4\n"
    )
    with working_directory(tmp_path):
        (job,) = assemble([Path("run.sh")])
    assert job.resources.gpus_per_node == 2 and job.training.epochs is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("actor_rollout_ref:\n  hybrid_engine: true\n", 0.95),
        ("defaults:\n  - actor@actor_rollout_ref.actor: dp_actor\n", 0.95),
        ("defaults:\n  - trainer: gpu\ntrainer:\n  max_epochs: 3\n", 0.0),
        ("trainer:\n  n_gpus_per_node: 8\n", 0.0),
    ],
)
def test_recognition(text: str, expected: float) -> None:
    assert verl.recognise(Input("c.yaml", text)) == expected


@pytest.mark.parametrize(
    ("key", "value", "facts"),
    [
        ("trainer.test_freq", "-1", [("/eval/strategy", "no")]),
        ("trainer.test_freq", "5", [("/eval/every_steps", 5), ("/eval/strategy", "steps")]),
        ("trainer.nnodes", "${NNODES}", []),
        ("~actor_rollout_ref.model.path", "", [("/model/name", None)]),
        ("critic.model.path", "x", []),  # the critic is not the model trained
    ],
)
def test_one_override(key: str, value: str, facts: list[tuple[str, Any]]) -> None:
    from trainlint.job import Location

    where = Location(file="run.sh", line=1, column=1)
    assert [(f.pointer, f.value) for f in verl.override_facts(key, value, where)] == facts


def test_without_config_name_the_app_s_own_config_is_the_base(tmp_path: Path) -> None:
    """Hydra loads ``@hydra.main(config_name="ppo")`` when the launch line names none."""
    job = _app(tmp_path, "python app/train.py trainer.total_epochs=3")
    assert [s.path for s in job.sources] == [
        "run.sh",
        "app/train.py",
        "app/conf/ppo.yaml",
    ]  # the entry script is a member
    assert job.training.epochs == 3 and job.checkpoint.every_steps == 10  # override, base


def test_a_group_choice_keeps_the_app_s_config_out(tmp_path: Path) -> None:
    """``experiment=x`` recomposes the config: its plain reading would state wrong values."""
    job = _app(tmp_path, "python app/train.py experiment=big trainer.total_epochs=3")
    assert [s.path for s in job.sources] == [
        "run.sh",
        "app/train.py",
    ] and job.checkpoint.every_steps is None


def test_an_app_not_in_the_repository_leaves_its_config_unresolved(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython3 -m pkg.main_ppo trainer.nnodes=2\n")
    with working_directory(tmp_path):
        (job,) = assemble([Path("run.sh")])
    assert job.missing_references == []
    (unresolved,) = job.unresolved_references
    assert unresolved.reason == "relative to pkg/main_ppo.py, which is not in the repository"


def test_an_app_whose_hydra_main_names_no_config_leaves_it_unresolved(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text('@hydra.main(config_path="conf")\ndef main(c): ...\n')
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython train.py trainer.nnodes=2\n")
    with working_directory(tmp_path):
        (job,) = assemble([Path("run.sh")])
    (unresolved,) = job.unresolved_references
    assert unresolved.reason == "the config_name of train.py's @hydra.main, which names none"
