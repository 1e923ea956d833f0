"""Grouping files into jobs, precedence of facts, and derived fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.assemble import assemble, build_job
from trainlint.discover import discover
from trainlint.job import Job, Location
from trainlint.read import Workspace
from trainlint.sources.base import Document, DocumentDefault, Fact

SCRIPT = """\
#!/bin/bash
torchrun --nproc_per_node=4 train.py \\
    --config configs/sft.yaml \\
    --deepspeed configs/ds.json \\
    --logging_steps 50
"""
SFT = """\
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
logging_steps: 1
max_steps: 100
"""
DS = '{"train_micro_batch_size_per_gpu": 16, "zero_optimization": {"stage": 2}}'


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def jobs_by_id(root: Path) -> dict[str, Job]:
    return {job.id: job for job in assemble(discover([root]), Workspace(root=root))}


def test_script_and_its_configs_are_one_job(in_tmp: Path) -> None:
    write(in_tmp, {"scripts/run.sh": SCRIPT, "configs/sft.yaml": SFT, "configs/ds.json": DS})
    jobs = jobs_by_id(Path("."))
    assert list(jobs) == ["scripts/run.sh"]  # references resolve from the repo root too
    job = jobs["scripts/run.sh"]
    assert [(s.path, s.role) for s in job.sources] == [
        ("scripts/run.sh", "entrypoint"),
        ("configs/sft.yaml", "config"),
        ("configs/ds.json", "deepspeed"),
    ]
    assert job.logging.every_steps == 50  # the command line beats the config...
    assert job.provenance["/logging/every_steps"].file == "scripts/run.sh"
    assert job.training.micro_batch_size == 2  # ...and the trainer config beats DeepSpeed
    assert job.provenance["/training/micro_batch_size"].file == "configs/sft.yaml"
    assert job.training.parallelism.zero_stage == 2


def test_derived_fields_point_at_their_inputs(in_tmp: Path) -> None:
    write(in_tmp, {"run.sh": SCRIPT, "configs/sft.yaml": SFT, "configs/ds.json": DS})
    job = jobs_by_id(Path("."))["run.sh"]
    assert (job.resources.world_size, job.training.global_batch_size) == (4, 2 * 8 * 4)
    assert job.training.total_steps == 100
    assert job.provenance["/resources/world_size"] == job.provenance["/resources/gpus_per_node"]
    assert job.provenance["/training/global_batch_size"].file == "configs/sft.yaml"


def test_unreferenced_configs_are_jobs_of_their_own(in_tmp: Path) -> None:
    files = {"run.sh": SCRIPT, "configs/sft.yaml": SFT, "configs/ds.json": DS, "other.yaml": SFT}
    write(in_tmp, files)
    assert sorted(jobs_by_id(Path("."))) == ["other.yaml", "run.sh"]


def test_a_config_shared_by_two_scripts_belongs_to_both(in_tmp: Path) -> None:
    write(in_tmp, {"a.sh": SCRIPT, "b.sh": SCRIPT, "configs/sft.yaml": SFT, "configs/ds.json": DS})
    jobs = jobs_by_id(Path("."))
    assert sorted(jobs) == ["a.sh", "b.sh"]
    assert all(job.training.micro_batch_size == 2 for job in jobs.values())


def test_self_reference_and_missing_files_do_not_loop_or_fail(in_tmp: Path) -> None:
    write(in_tmp, {"cfg.yaml": "save_steps: 5\ndeepspeed: cfg.yaml\n", "run.sh": SCRIPT})
    jobs = jobs_by_id(Path("."))
    assert jobs["cfg.yaml"].checkpoint.every_steps == 5
    assert [s.path for s in jobs["run.sh"].sources] == ["run.sh"]  # its configs do not exist


def test_a_fact_the_model_rejects_is_dropped_not_fatal() -> None:
    here = Location(file="cfg.yaml", line=1, column=1)
    doc = Document("cfg.yaml", "hf-trainer", 1.0, facts=[
        Fact("/training/seed", "not a number", here), Fact("/checkpoint/every_steps", 5.0, here),
    ])  # fmt: skip
    job = build_job([doc])
    assert (job.training.seed, job.checkpoint.every_steps) == (None, 5.0)
    assert "/training/seed" not in job.provenance


def test_a_config_follows_its_own_references(in_tmp: Path) -> None:
    write(in_tmp, {"sft.yaml": "save_steps: 10\ndeepspeed: ds.json\n", "ds.json": DS})
    jobs = jobs_by_id(Path("."))
    assert list(jobs) == ["sft.yaml"]  # ds.json is part of it, not a job of its own
    assert jobs["sft.yaml"].training.parallelism.zero_stage == 2


def test_a_wrapper_and_the_script_it_runs_are_one_job(in_tmp: Path) -> None:
    wrapper = '#!/bin/bash\n#SBATCH --gres=gpu:8\n#SBATCH --comment="team=a"\nsrun bash run.sh\n'
    inner = "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --save_steps 5\n"
    write(in_tmp, {"submit.slurm": wrapper, "run.sh": inner})
    jobs = jobs_by_id(Path("."))
    assert list(jobs) == ["submit.slurm"]
    job = jobs["submit.slurm"]
    assert (job.tags, job.launcher.kind, job.checkpoint.every_steps) == (
        {"team": "a"},
        "torchrun",
        5,
    )


def test_an_unrecognised_referenced_file_is_still_a_source(in_tmp: Path) -> None:
    script = "#!/bin/bash\naccelerate launch --config_file acc.yaml train.py --save_steps 5\n"
    write(in_tmp, {"run.sh": script, "acc.yaml": "notes: hi\n"})
    job = jobs_by_id(Path("."))["run.sh"]
    assert [(s.path, s.format) for s in job.sources] == [
        ("run.sh", "launch-script"),
        ("acc.yaml", "unrecognised"),
    ]


def test_the_same_file_named_twice_is_read_once(in_tmp: Path) -> None:
    write(in_tmp, {"cfg.yaml": "save_steps: 5\n"})
    files = discover([Path("."), Path("cfg.yaml"), in_tmp.resolve()])
    assert len(assemble(files, Workspace())) == 1


def test_global_batch_counts_data_parallel_replicas_only() -> None:
    here = Location(file="run.sh", line=1, column=1)
    facts = [
        Fact("/resources/gpus_per_node", 8, here), Fact("/resources/nodes", 12, here),
        Fact("/training/micro_batch_size", 4, here), Fact("/training/grad_accum_steps", 32, here),
        Fact("/training/parallelism/tensor", 2, here),
        Fact("/training/parallelism/pipeline", 4, here),
    ]  # fmt: skip
    job = build_job([Document("run.sh", "launch-script", 1.0, "entrypoint", facts=facts)])
    assert job.resources.world_size == 96
    assert job.training.global_batch_size == 4 * 32 * 96 // (2 * 4)


def test_an_uneven_split_says_nothing_per_node() -> None:
    here = Location(file="acc.yaml", line=1, column=1)
    facts = [Fact("/resources/world_size", 6, here), Fact("/resources/nodes", 4, here)]
    job = build_job([Document("acc.yaml", "accelerate", 1.0, facts=facts)])
    assert job.resources.gpus_per_node is None


def test_world_size_from_deepspeeds_batch_identity() -> None:
    here = Location(file="ds.json", line=2, column=3)
    facts = [
        Fact("/training/global_batch_size", 256, here),
        Fact("/training/micro_batch_size", 8, here),
        Fact("/training/grad_accum_steps", 4, here),
    ]
    job = build_job([Document("ds.json", "deepspeed", 1.0, "deepspeed", facts=facts)])
    assert job.resources.world_size == 8  # 256 = 8 * 4 * world
    assert job.provenance["/resources/world_size"] == here


@pytest.mark.parametrize(
    ("files", "pointer", "value"),
    [
        ({"run.sh": "python main.py fit --config fit.yaml --trainer.devices 2\n",
          "fit.yaml": "seed_everything: 1\ntrainer:\n  devices: 4\n  max_steps: 9\n"},
         "/resources/gpus_per_node", 2),
        ({"run.sh": "torchrun train.py config/train_small.py --batch_size=32 --compile=False\n",
          "config/train_small.py": "batch_size = 12\nblock_size = 256\nn_layer = 6\n"},
         "/training/micro_batch_size", 32),
        ({"run.sh": "tune run full_finetune_single_device --config cfg.yaml batch_size=8\n",
          "cfg.yaml": "model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\n"
                      "batch_size: 2\nepochs: 1\n"},
         "/training/micro_batch_size", 8),
    ],
)  # fmt: skip
def test_command_line_overrides_are_read_by_the_configs_format(
    in_tmp: Path, files: dict[str, str], pointer: str, value: object
) -> None:
    write(in_tmp, files)
    job = jobs_by_id(Path("."))["run.sh"]
    found: object = job.model_dump(by_alias=True)
    for part in pointer.strip("/").split("/"):
        found = found[part] if isinstance(found, dict) else None
    assert found == value
    assert job.provenance[pointer].file == "run.sh"


def test_accelerate_per_node_count_follows_a_command_line_override(in_tmp: Path) -> None:
    config = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 2\n"
    script = "accelerate launch --config_file acc.yaml --num_processes 4 train.py\n"
    write(in_tmp, {"run.sh": script, "acc.yaml": config + "num_processes: 16\n"})
    res = jobs_by_id(Path("."))["run.sh"].resources
    assert (res.world_size, res.nodes, res.gpus_per_node) == (4, 2, 2)


def test_a_value_the_composition_leaves_unknown_stays_unknown(in_tmp: Path) -> None:
    write(in_tmp, {
        "conf/config.yaml": "defaults:\n  - trainer: gpu\n  - _self_\n\n"
                            "trainer:\n  devices: ${oc.env:NGPU}\n",
        "conf/trainer/gpu.yaml": "devices: 8\nmax_epochs: 3\n",
    })  # fmt: skip
    jobs = jobs_by_id(Path("."))
    assert list(jobs) == ["conf/config.yaml"]  # the group file is a member, not a job
    job = jobs["conf/config.yaml"]
    assert job.resources.gpus_per_node is None  # not the group file's literal 8
    assert job.training.epochs == 3  # what the composition did set still counts
    assert [(s.path, s.role) for s in job.sources][1] == ("conf/trainer/gpu.yaml", "member")


def test_accumulation_derived_from_global_micro_and_replicas() -> None:
    here = Location(file="gpt.yaml", line=1, column=1)
    facts = [
        Fact("/resources/gpus_per_node", 8, here), Fact("/resources/nodes", 2, here),
        Fact("/training/parallelism/tensor", 2, here),
        Fact("/training/micro_batch_size", 4, here), Fact("/training/global_batch_size", 256, here),
    ]  # fmt: skip
    job = build_job([Document("gpt.yaml", "nemo", 1.0, facts=facts)])
    assert job.training.grad_accum_steps == 256 // (4 * (16 // 2))


def test_features_are_collected_with_their_location_and_fallback(in_tmp: Path) -> None:
    write(
        in_tmp,
        {
            "sft.yaml": "# trainlint: fallback.Flash_Attn=sdpa\n"
            "model_name_or_path: m\nattn_implementation: flash_attention_2\n"
            "use_liger_kernel: true\nper_device_train_batch_size: 4\noptim: muon\n"
        },
    )
    job = jobs_by_id(in_tmp)["sft.yaml"]
    assert [(f.name, f.kind, f.experimental, f.fallback) for f in job.features] == [
        ("flash-attn", "kernel", True, "sdpa"),
        ("liger", "kernel", True, None),
        ("muon", "optimizer", True, None),
    ]
    lines = [job.provenance[f"/features/{i}"].line for i in range(3)]
    assert lines == [3, 4, 6]
    assert not any(p.startswith("/features/") and not p[10:].isdigit() for p in job.provenance)


def test_fp8_precision_is_a_feature(in_tmp: Path) -> None:
    write(in_tmp, {
        "accelerate.yaml": "distributed_type: MULTI_GPU\nmixed_precision: fp8\n",
        "run.sh": "accelerate launch --config_file accelerate.yaml train.py\n",
    })  # fmt: skip
    job = jobs_by_id(in_tmp)["run.sh"]
    assert [(f.name, f.kind) for f in job.features] == [("fp8", "precision")]
    assert job.provenance["/features/0"].line == 2


def test_established_optimizer_and_precision_are_no_features(in_tmp: Path) -> None:
    write(in_tmp, {"sft.yaml": "per_device_train_batch_size: 4\noptim: adamw_torch\nbf16: true\n"})
    assert jobs_by_id(in_tmp)["sft.yaml"].features == []


@pytest.mark.parametrize(
    ("files", "world", "accum"),
    [
        # nanoGPT: accumulation counts every rank, so the world size is not in the batch
        ({"config/train_gpt2.py": "batch_size = 12\nblock_size = 1024\n"
          "gradient_accumulation_steps = 5 * 8\nmax_iters = 600000\n"}, None, None),
        # Composer-like global / micro with accumulation unknown: no world size
        ({"ds.json": '{"train_batch_size": 128, "train_micro_batch_size_per_gpu": 4}'}, None, None),
        # with accumulation stated, global / (micro x accumulation) is the world size
        ({"ds.json": '{"train_batch_size": 128, "train_micro_batch_size_per_gpu": 4, '
                     '"gradient_accumulation_steps": 4}'}, 8, 4),
    ],
)  # fmt: skip
def test_the_world_size_is_derived_only_from_stated_facts(
    in_tmp: Path, files: dict[str, str], world: int | None, accum: int | None
) -> None:
    write(in_tmp, files)
    [job] = jobs_by_id(in_tmp).values()
    assert (job.resources.world_size, job.training.grad_accum_steps) == (world, accum)
    assert ("/resources/world_size" in job.derived) == (world is not None)


def test_an_impossible_layout_derives_nothing_and_is_not_estimated(in_tmp: Path) -> None:
    write(in_tmp, {"train.sh": (
        "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --num-layers 96 "
        "--hidden-size 12288 --num-attention-heads 96 --seq-length 2048 "
        "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 "
        "--micro-batch-size 1 --global-batch-size 1536\n"
    )})  # fmt: skip
    job = jobs_by_id(in_tmp)["train.sh"]
    assert job.training.grad_accum_steps is None and "/training/grad_accum_steps" not in job.derived
    from trainlint.estimate import estimate

    estimates = estimate(job)
    assert estimates.memory.total_bytes is None and estimates.unknown[0].startswith("parallel")


def test_a_default_the_model_cannot_hold_is_dropped_not_fatal() -> None:
    """A list default (reporters, an entry script's ``report_to=["tensorboard"]``) is kept; a
    value the job model has no shape for is dropped, never a crash (exit 3 on
    DeepSpeedExamples)."""
    here = Location(file="train.py", line=3, column=5)
    doc = Document("train.py", "python-code", 1.0, defaults=[
        DocumentDefault("/logging/reporters", ["tensorboard"], "report_to", here),
        DocumentDefault("/training/seed", {"not": "a value"}, "seed", here),  # type: ignore[arg-type]
    ])  # fmt: skip
    job = build_job([doc])
    assert job.defaults["/logging/reporters"].value == ["tensorboard"]
    assert "/training/seed" not in job.defaults
