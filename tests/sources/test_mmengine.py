"""MMEngine Python configs: real mmpretrain configs with their ``_base_`` files (old style and
``with read_base()``), MMEngine's merge rules, the loop, hook and wrapper semantics, unread
bases, typos, tools/train.py's overrides, and a checked job end to end. Nothing is executed."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path
from typing import Any

import pytest

from trainlint.assemble import assemble
from trainlint.sources import read_document
from trainlint.sources.base import Document, Input
from trainlint.sources.python.literal import UNKNOWN
from trainlint.sources.python.mmconfig import read_view
from trainlint.sources.structured import MAX_NODES

FIXTURES = Path(__file__).parent / "fixtures" / "mmengine"


def read(path: Path) -> Document:
    doc = read_document(Input(path.as_posix(), path.read_text()))
    assert isinstance(doc, Document), doc
    return doc


def found(doc: Document) -> dict[str, tuple[Any, str, int]]:
    """pointer → (value, file name, line)."""
    return {f.pointer: (f.value, Path(f.location.file).name, f.location.line) for f in doc.facts}


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def facts_of(folder: Path, name: str = "configs/run.py") -> dict[str, Any]:
    return {f.pointer: f.value for f in read(folder / name).facts}


def test_a_base_only_config_states_what_its_bases_merge_to_each_at_its_own_line() -> None:
    doc = read(FIXTURES / "configs/resnet/resnet50_8xb32_in1k.py")
    assert doc.format == "mmengine" and doc.role == "config"
    facts = found(doc)
    assert facts["/training/epochs"] == (100.0, "imagenet_bs256.py", 10)
    assert facts["/training/micro_batch_size"] == (32, "imagenet_bs32.py", 27)
    assert facts["/data/num_workers"] == (5, "imagenet_bs32.py", 28)
    assert facts["/data/image_size"] == (224, "imagenet_bs32.py", 14)
    assert facts["/model/name"] == ("ResNet-50", "resnet50.py", 5)
    assert facts["/checkpoint/every_epochs"] == (1.0, "default_runtime.py", 16)
    assert facts["/logging/every_steps"] == (100.0, "default_runtime.py", 10)
    assert facts["/training/optimizer/name"][0] == "SGD"
    assert "/training/precision" not in facts and "/checkpoint/keep_last" not in facts
    # defaults sit where this config would override them: the bases are every config's
    defaults = {d.pointer: (d.value, d.key, d.location.file, d.location.line) for d in doc.defaults}
    leaf = doc.path
    assert defaults["/training/precision"] == ("fp32", "optim_wrapper.type", leaf, 1)
    assert defaults["/training/seed"] == (None, "randomness.seed", leaf, 1)  # seed=None: random
    assert [(r.path, r.role) for r in doc.references] == [
        (f"../_base_/{name}.py", "member")
        for name in ("models/resnet50", "datasets/imagenet_bs32", "schedules/imagenet_bs256",
                     "default_runtime")
    ]  # fmt: skip


def test_the_pure_python_style_imports_its_bases_and_names_classes_as_types() -> None:
    facts = found(read(FIXTURES / "mmpretrain/configs/resnet/resnet18_8xb32_in1k.py"))
    assert facts["/model/name"] == ("ResNet-18", "resnet18.py", 10)
    assert facts["/data/image_size"] == (224, "imagenet_bs32.py", 23)
    assert facts["/training/epochs"] == (100.0, "imagenet_bs256.py", 15)
    assert facts["/checkpoint/every_epochs"][0] == 1.0


def test_deepspeed_strategy_decides_precision_and_a_runnable_base_stays_its_own_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(FIXTURES)
    ds = "configs/mae/benchmarks/vit-large-p16_8xb128-ds-coslr-50e_in1k.py"
    facts = found(read(Path(ds)))
    assert facts["/training/precision"][0] == "fp16"
    assert facts["/training/parallelism/strategy"][0] == "deepspeed"
    assert facts["/training/parallelism/zero_stage"][:2] == (1, Path(ds).name)
    assert facts["/training/epochs"][:2] == (50.0, "vit-large-p16_8xb128-coslr-50e_in1k.py")
    base = "configs/mae/benchmarks/vit-large-p16_8xb128-coslr-50e_in1k.py"
    assert {job.id for job in assemble([Path(ds), Path(base)])} == {ds, base}


def test_base_folders_are_pieces_never_runs() -> None:
    doc = read(FIXTURES / "configs/_base_/schedules/imagenet_bs256.py")
    assert doc.facts == [] and doc.purpose is not None and "base config" in doc.purpose


def test_bases_merge_key_by_key_and_delete_replaces(in_tmp: Path) -> None:
    write(in_tmp, {
        "configs/_base_/a.py": "train_dataloader = dict(batch_size=8, num_workers=2)\n"
                               "optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16')\n"
                               "default_hooks = dict(checkpoint=dict(type='CheckpointHook', "
                               "interval=1, max_keep_ckpts=2))\n",
        "configs/run.py": "_base_ = ['./_base_/a.py']\n"
                          "train_cfg = dict(by_epoch=True, max_epochs=12)\n"
                          "train_dataloader = dict(batch_size=16)\n"
                          "default_hooks = dict(checkpoint=dict(_delete_=True, "
                          "type='CheckpointHook', interval=2))\n",
    })  # fmt: skip
    facts = facts_of(in_tmp)
    assert facts["/training/micro_batch_size"] == 16 and facts["/data/num_workers"] == 2
    assert facts["/training/precision"] == "bf16"
    assert facts["/checkpoint/every_epochs"] == 2.0
    assert "/checkpoint/keep_last" not in facts  # deleted with the base's hook


def test_base_values_are_read_through_base_references(in_tmp: Path) -> None:
    write(in_tmp, {
        "configs/base.py": "bs = 24\nmodel = dict(type='ImageClassifier', "
                           "backbone=dict(type='ResNet', depth=101))\n",
        "configs/run.py": "_base_ = 'base.py'\n"
                          "train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=3)\n"
                          "train_dataloader = dict(batch_size={{_base_.bs}} * 2, num_workers=1)\n"
                          "depth = _base_.model.backbone.depth\n",
    })  # fmt: skip
    facts = facts_of(in_tmp)
    assert facts["/training/micro_batch_size"] == 48
    assert facts["/model/name"] == "ResNet-101"


@pytest.mark.parametrize(
    ("optim", "hooks", "expected"),
    [
        ("dict(type='OptimWrapper', accumulative_counts=4)",
         "dict(checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=4000), "
         "logger=dict(type='LoggerHook', interval=40))",
         {"/training/max_steps": 20000, "/checkpoint/every_steps": 1000.0,
          "/checkpoint/strategy": "steps", "/logging/every_steps": 10.0,
          "/eval/every_steps": 2000.0,
          "/training/grad_accum_steps": 4, "/training/precision": "fp32"}),
        ("dict(type='OptimWrapper')", "dict(checkpoint=None)",
         {"/training/max_steps": 80000, "/checkpoint/strategy": "no",
          "/logging/every_steps": 10.0, "/eval/every_steps": 8000.0,
          "/training/precision": "fp32"}),
        # an epoch checkpoint under an iteration loop never saves
        ("dict(type='AmpOptimWrapper')", "dict(checkpoint=dict(type='CheckpointHook', interval=1))",
         {"/training/max_steps": 80000, "/logging/every_steps": 10.0,
          "/eval/every_steps": 8000.0, "/training/precision": "fp16"}),
    ],
)  # fmt: skip
def test_an_iteration_loop_counts_optimizer_steps(
    in_tmp: Path, optim: str, hooks: str, expected: dict[str, Any]
) -> None:
    write(in_tmp, {"configs/run.py": (
        "train_cfg = dict(type='IterBasedTrainLoop', max_iters=80000, val_interval=8000)\n"
        f"optim_wrapper = {optim}\ndefault_hooks = {hooks}\n"
    )})  # fmt: skip
    facts = facts_of(in_tmp)
    assert {p: facts.get(p) for p in expected} == expected
    checkpoints = {p for p in facts if p.startswith("/checkpoint/")}
    assert checkpoints == {p for p in expected if p.startswith("/checkpoint/")}
    assert facts["/eval/strategy"] == "steps" and "/training/epochs" not in facts


def test_an_unread_base_leaves_unknown_what_it_could_set(in_tmp: Path) -> None:
    write(in_tmp, {"configs/run.py": (
        "_base_ = ['mmdet::faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py']\n"
        "train_cfg = dict(by_epoch=True, max_epochs=24)\n"
        "default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=2))\n"
    )})  # fmt: skip
    doc = read(in_tmp / "configs/run.py")
    facts = {f.pointer: f.value for f in doc.facts}
    assert facts == {"/training/epochs": 24.0}  # by_epoch of the hook may be the base's
    assert doc.defaults == []
    (reference,) = doc.references
    assert reference.unresolved is not None and "mmdet" in reference.unresolved


def test_a_config_inheriting_a_run_lists_its_files_but_not_its_defaults(in_tmp: Path) -> None:
    """A run another config inherits (mmyolo's razor subnets over yolov6_l) is a member of the
    inheriting job, with its bases, yet roots its own job; read alone it sees all its bases,
    so its random-seed default is its own, never the inheriting job's, whose package base
    could set the seed."""
    write(in_tmp, {
        "configs/_base_/default_runtime.py": "default_scope = 'mmyolo'\n",
        "configs/yolov6/run.py": "_base_ = '../_base_/default_runtime.py'\n"
                                 "train_cfg = dict(by_epoch=True, max_epochs=300)\n",
        "configs/razor/subnet.py": "_base_ = ['mmrazor::nas/attentivenas.py', '../yolov6/run.py']\n"
                                   "train_cfg = dict(by_epoch=True, max_epochs=100)\n",
    })  # fmt: skip
    jobs = {job.id: job for job in assemble([Path("configs/razor/subnet.py"),
                                             Path("configs/yolov6/run.py")])}  # fmt: skip
    subnet, run = jobs["configs/razor/subnet.py"], jobs["configs/yolov6/run.py"]
    assert [(s.path, s.role) for s in subnet.sources] == [
        ("configs/razor/subnet.py", "config"), ("configs/yolov6/run.py", "member"),
        ("configs/_base_/default_runtime.py", "member"),
    ]  # fmt: skip
    assert [u.path for u in subnet.unresolved_references] == ["mmrazor::nas/attentivenas.py"]
    assert "/training/seed" in run.defaults and "/training/seed" not in subnet.defaults


def test_a_missing_base_is_a_missing_reference(in_tmp: Path) -> None:
    text = "_base_ = '../_base_/gone.py'\ntrain_cfg = dict(by_epoch=True, max_epochs=2)\n"
    write(in_tmp, {"configs/run.py": text})
    (job,) = assemble([Path("configs/run.py")])
    assert [m.path for m in job.missing_references] == ["../_base_/gone.py"]
    assert job.training.epochs == 2


def test_a_typo_in_a_loop_or_the_logger_hook_is_reported(in_tmp: Path) -> None:
    write(in_tmp, {"configs/run.py": (
        "train_cfg = dict(by_epoch=True, max_epoch=12, val_interval=1)\n"
        "default_hooks = dict(logger=dict(type='LoggerHook', intervl=50))\n"
    )})  # fmt: skip
    doc = read(in_tmp / "configs/run.py")
    assert [(u.key, u.suggestion, u.line) for u in doc.unknown_keys] == [
        ("max_epoch", "max_epochs", 1), ("intervl", "interval", 2)
    ]  # fmt: skip


def test_tools_train_amp_and_cfg_options_override_the_config(in_tmp: Path) -> None:
    shutil.copytree(FIXTURES / "configs", in_tmp / "configs")
    write(in_tmp, {"train.sh": (
        "#!/bin/bash\npython tools/train.py configs/resnet/resnet50_8xb32_in1k.py --amp "
        "--cfg-options train_dataloader.batch_size=64 randomness.seed=7\n"
    )})  # fmt: skip
    (job,) = assemble([Path("train.sh")])
    assert job.training.precision == "fp16" and job.provenance["/training/precision"].file == (
        "train.sh"
    )
    assert job.training.micro_batch_size == 64 and job.training.seed == 7
    assert job.training.epochs == 100
    members = {s.path: s.role for s in job.sources}
    assert members["configs/_base_/default_runtime.py"] == "member"


def test_the_config_is_never_run(in_tmp: Path) -> None:
    write(in_tmp, {"configs/run.py": (
        "import os\nos.system('touch ran')\n__import__('os').system('touch ran')\n"
        "_base_ = [open('ran', 'w').name]\ntrain_cfg = dict(by_epoch=True, max_epochs=2)\n"
    )})  # fmt: skip
    facts = facts_of(in_tmp)
    assert facts == {"/training/epochs": 2.0} and not (in_tmp / "ran").exists()


def test_a_base_cycle_ends(in_tmp: Path) -> None:
    write(in_tmp, {
        "configs/a.py": "_base_ = 'run.py'\ntrain_dataloader = dict(batch_size=4)\n",
        "configs/run.py": "_base_ = 'a.py'\ntrain_cfg = dict(by_epoch=True, max_epochs=2)\n",
    })  # fmt: skip
    facts = facts_of(in_tmp)
    assert facts["/training/epochs"] == 2.0 and facts["/training/micro_batch_size"] == 4


@pytest.mark.parametrize(
    "text",
    ["import torch\nbatch_size = 32\n", "train_cfg = {'a': 1}\n", "dataset = dict(x=1)\n"],
)
def test_other_python_is_not_an_mmengine_config(text: str) -> None:
    doc = read_document(Input("train.py", text))
    assert not (isinstance(doc, Document) and doc.format == "mmengine")


MMCV_1X = """\
optimizer = dict(type='SGD', lr=0.01)
optimizer_config = dict(type='Fp16OptimizerHook', loss_scale='dynamic')
runner = dict(type='IterBasedRunner', max_iters=24900)
checkpoint_config = dict(by_epoch=False, interval=415, max_keep_ckpts=3)
log_config = dict(interval=50, hooks=[dict(type='TextLoggerHook')])
evaluation = dict(interval=830, metric='mDice')
data = dict(samples_per_gpu=2, workers_per_gpu=4, train=dict(pipeline=[
    dict(type='Resize', img_scale=(2048, 512), keep_ratio=True),
    dict(type='RandomCrop', crop_size=(512, 512))]))
"""


def test_an_openmmlab_1x_config_reads_as_mmcvs_runner_runs_it(in_tmp: Path) -> None:
    write(in_tmp, {"configs/run.py": MMCV_1X})
    doc = read(in_tmp / "configs/run.py")
    lines = {f.pointer: (f.value, f.location.line) for f in doc.facts}
    assert {p: lines[p] for p in lines if not p.startswith("/training/optimizer/")} == {
        "/training/max_steps": (24900, 3), "/checkpoint/every_steps": (415.0, 4),
        "/checkpoint/strategy": ("steps", 4), "/checkpoint/keep_last": (3, 4),
        "/logging/every_steps": (50.0, 5), "/training/micro_batch_size": (2, 7),
        "/data/num_workers": (4, 7), "/data/image_size": (512, 9),
        "/training/precision": ("fp16", 2),
    }  # fmt: skip


def test_an_openmmlab_1x_config_without_hooks_gets_no_mmengine_default(in_tmp: Path) -> None:
    write(in_tmp, {"configs/run.py": (
        "runner = dict(type='EpochBasedRunner', max_epochs=12)\n"
        "checkpoint_config = None\nfp16 = dict(loss_scale=512.)\n"
    )})  # fmt: skip
    facts = facts_of(in_tmp)
    assert facts == {"/training/epochs": 12.0, "/training/precision": "fp16"}


def test_a_value_sharing_its_parts_past_the_node_budget_is_unknown(in_tmp: Path) -> None:
    """``a = [a, a, a, a]`` forty times is a tree of 4**40 nodes in a few lines."""
    growth = "a = [a, a, a, a]\n" * 40
    write(in_tmp, {"configs/run.py": (
        "train_cfg = dict(by_epoch=True, max_epochs=2)\na = [1]\n" + growth
        + "train_dataloader = dict(batch_size=4, dataset=dict(pipeline=a))\n"
    )})  # fmt: skip
    facts = facts_of(in_tmp)
    assert facts["/training/epochs"] == 2.0 and facts["/training/micro_batch_size"] == 4
    path = in_tmp / "configs/run.py"
    view = read_view(path, path.read_text(), ast.parse(path.read_text()))
    assert len(view.config.where) <= MAX_NODES  # each place is a node: the tree stays bounded
    assert UNKNOWN in [item for level in view.config.at(("a", 0, 0)).data for item in level]


def test_a_config_without_a_train_loop_is_no_run(in_tmp: Path) -> None:
    """Zero-shot CLIP configs inherit the runtime's hooks but have no train_cfg."""
    write(in_tmp, {
        "configs/_base_/runtime.py": "default_hooks = dict(logger=dict(type='LoggerHook'))\n",
        "configs/run.py": "_base_ = ['./_base_/runtime.py']\ntest_dataloader = dict(batch_size=8)\n"
                          "val_cfg = dict()\ntest_cfg = dict()\ntrain_cfg = None\n",
    })  # fmt: skip
    doc = read(in_tmp / "configs/run.py")
    assert doc.facts == [] and doc.purpose is not None and "train_cfg" in doc.purpose
    assert assemble([Path("configs/run.py")]) == []
