"""detectron2: yacs configs composed over their ``_BASE_`` with each value at its own place,
LazyConfig Python with the ``..common`` files it imports, ``train_net.py`` launch lines, typos
against defaults.py's keys, and the jobs a config repository roots."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from tests.sources.helpers import (
    fixture_repository,
    job_values,
    mappings,
    near_misses,
    parse_never_raises,
)
from trainlint.assemble import assemble
from trainlint.job import Job
from trainlint.sources import detectron2, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "detectron2"


def repository(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    """A git work tree holding the detectron2 fixtures (configs/, dev/) and ``extra`` files.
    The tests enter it: job ids and the names that say a file's purpose are relative to it."""
    return fixture_repository(FIXTURES, tmp_path, extra)


def read(path: Path) -> Document:
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document), doc
    return doc


def located(doc: Document) -> dict[str, tuple[object, str, int]]:
    """pointer → (value, file name, line)."""
    return {
        f.pointer: (f.value, f.location.file.rsplit("/", 1)[-1], f.location.line) for f in doc.facts
    }


def by_name(jobs: list[Job]) -> dict[str, Job]:
    return {job.id.rsplit("/", 1)[-1]: job for job in jobs}


def jobs_of(root: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> dict[str, Job]:
    """The jobs of the named files (every file when none is named), checked from ``root``."""
    monkeypatch.chdir(root)
    files = [Path(name) for name in names] or sorted(
        p.relative_to(root) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
    )
    return by_name(assemble(files))


def test_yacs_config_is_composed_over_its_base(tmp_path: Path) -> None:
    root = repository(tmp_path)
    doc = read(root / "configs/COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_3x.yaml")
    assert doc.format == "detectron2"
    assert located(doc) == {
        "/training/max_steps": (270000, "mask_rcnn_R_50_FPN_3x.yaml", 9),  # the file wins
        "/training/global_batch_size": (16, "Base-RCNN-FPN.yaml", 36),  # inherited, located there
        "/training/grad_accum_steps": (1, "Base-RCNN-FPN.yaml", 36),
        "/model/name": ("mask_rcnn_R_50_FPN", "Base-RCNN-FPN.yaml", 2),
    }
    assert [(r.path, r.role) for r in doc.references] == [("../Base-RCNN-FPN.yaml", "member")]
    defaults = {d.pointer: d.value for d in doc.defaults}
    assert defaults["/training/precision"] == "fp32"  # SOLVER.AMP.ENABLED is false by default
    assert defaults["/training/seed"] is None  # SEED -1: a new seed every run


def test_model_names_follow_the_model_zoo(tmp_path: Path) -> None:
    root = repository(tmp_path)
    c4 = read(root / "configs/COCO-Detection/faster_rcnn_R_101_C4_3x.yaml")
    retina = read(root / "configs/COCO-Detection/retinanet_R_50_FPN_1x.yaml")
    assert located(c4)["/model/name"][0] == "faster_rcnn_R_101_C4"
    assert located(retina)["/model/name"][0] == "retinanet_R_50_FPN"


FPN = {"BACKBONE": {"NAME": "build_resnet_fpn_backbone"}, "ROI_HEADS": {"NAME": "StandardROIHeads"}}


@pytest.mark.parametrize(
    ("model", "named"),
    [
        ({**FPN, "KEYPOINT_ON": True}, "keypoint_rcnn_R_50_FPN"),
        ({**FPN, "MASK_ON": True, "RESNETS": {"DEPTH": 101, "NUM_GROUPS": 32,
                                              "WIDTH_PER_GROUP": 8}}, "mask_rcnn_X_101_32x8d_FPN"),
        ({**FPN, "LOAD_PROPOSALS": True}, "fast_rcnn_R_50_FPN"),
        ({"RESNETS": {"RES5_DILATION": 2}}, "faster_rcnn_R_50_DC5"),
        ({**FPN, "META_ARCHITECTURE": "PanopticFPN", "MASK_ON": True}, "panoptic_fpn_R_50"),
        ({**FPN, "MASK_ON": True, "ROI_MASK_HEAD": {"NAME": "PointRendMaskHead"}}, None),
        ({**FPN, "ROI_HEADS": {"NAME": "DensePoseROIHeads"}}, None),
        ({**FPN, "BACKBONE": {"NAME": "build_vit_fpn_backbone"}}, None),
    ],
)  # fmt: skip
def test_model_zoo_names_and_models_it_does_not_name(
    model: dict[str, object], named: str | None
) -> None:
    model = {"META_ARCHITECTURE": "GeneralizedRCNN", **model}
    assert detectron2.model_name({"MODEL": model}) == named


def test_eval_period_and_a_python_tag_in_a_base(tmp_path: Path) -> None:
    root = repository(tmp_path)
    cityscapes = located(read(root / "configs/Cityscapes/mask_rcnn_R_50_FPN.yaml"))
    assert cityscapes["/eval/every_steps"] == (8000, "mask_rcnn_R_50_FPN.yaml", 27)
    assert cityscapes["/eval/strategy"][0] == "steps"
    assert cityscapes["/training/global_batch_size"][0] == 8
    base = read(root / "configs/Base-RetinaNet.yaml")  # !!python/object/apply:eval: a value
    assert base.errors == [] and base.format == "detectron2"


def test_typos_and_a_batch_rescaled_at_run_time() -> None:
    text = (
        "SOLVER:\n  IMS_PER_BATCH: 64\n  MAX_ITERS: 1000\n  REFERENCE_WORLD_SIZE: 8\n"
        "MODEL:\n  MY_PROJECT_HEAD:\n    DEPTH: 3\n  RESNETS:\n    DEPTHH: 101\n"
    )
    doc = detectron2.parse(Input("configs/x.yaml", text))
    assert near_misses(doc) == [("MAX_ITERS", "MAX_ITER", 3), ("DEPTHH", "DEPTH", 9)]
    assert located(doc)["/training/global_batch_size"][0] is None  # auto_scale_workers


def test_lazyconfig_changes_after_an_import(tmp_path: Path) -> None:
    """The 200-epoch config doubles the 100-epoch one's max_iter; what an ``if`` or an
    ``update`` call may change is unknown, never the imported value."""
    doubled = (
        "from .mask_rcnn_R_50_FPN_100ep_LSJ import dataloader, train\n\n"
        "train.max_iter *= 2  # 100ep -> 200ep\n"
        "if FAST:\n    train.eval_period = 100\n"
        "dataloader.train.update(total_batch_size=32)\n"
        "def helper(train):\n    train = None\n"
    )
    root = repository(tmp_path, {"configs/new_baselines/doubled.py": doubled})
    found = located(read(root / "configs/new_baselines/doubled.py"))
    assert found["/training/max_steps"] == (368750, "doubled.py", 3)
    assert found["/eval/every_steps"] == (None, "doubled.py", 5)
    assert found["/training/global_batch_size"] == (None, "doubled.py", 6)
    assert found["/checkpoint/every_steps"] == (5000, "train.py", 13)  # untouched


def test_other_yacs_tools_are_not_claimed() -> None:
    slowfast = "TRAIN:\n  BATCH_SIZE: 64\nDATA_LOADER:\n  NUM_WORKERS: 8\nSOLVER:\n  BASE_LR: 0.1\n"
    fastreid = '_BASE_: "../Base-bagtricks.yml"\nSOLVER:\n  MAX_EPOCH: 60\n  IMS_PER_BATCH: 64\n'
    for text in (slowfast + "MODEL:\n  ARCH: slowfast\n", fastreid):
        assert detectron2.recognise(Input("configs/x.yaml", text)) == 0.0


def test_lazyconfig_reads_the_common_files_it_imports(tmp_path: Path) -> None:
    root = repository(tmp_path)
    doc = read(root / "configs/new_baselines/mask_rcnn_R_50_FPN_100ep_LSJ.py")
    assert doc.format == "detectron2"
    assert located(doc) == {
        "/training/max_steps": (184375, "mask_rcnn_R_50_FPN_100ep_LSJ.py", 59),
        "/checkpoint/every_steps": (5000, "train.py", 13),
        "/checkpoint/strategy": ("steps", "train.py", 13),
        "/checkpoint/keep_last": (100, "train.py", 13),
        "/eval/every_steps": (5000, "train.py", 14),
        "/eval/strategy": ("steps", "train.py", 14),
        "/logging/every_steps": (20, "train.py", 15),
        "/training/precision": ("fp16", "mask_rcnn_R_50_FPN_100ep_LSJ.py", 14),
        "/training/global_batch_size": (64, "mask_rcnn_R_50_FPN_100ep_LSJ.py", 55),
        "/training/grad_accum_steps": (1, "mask_rcnn_R_50_FPN_100ep_LSJ.py", 55),
        "/data/num_workers": (4, "coco.py", 31),
    }
    assert sorted(r.path for r in doc.references) == [
        "../common/data/coco.py", "../common/models/mask_rcnn_fpn.py",
        "../common/optim.py", "../common/train.py",
    ]  # fmt: skip


def test_config_repository_roots_one_job_per_training_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base read through a config whose referrer is no job (an instant test) stays a member
    of that config's job instead of rooting one of its own."""
    test = '_BASE_: "../COCO-Detection/retinanet_R_50_FPN_1x.yaml"\nSOLVER:\n  MAX_ITER: 40\n'
    extra = {"configs/quick_schedules/retinanet_instant_test.yaml": test}
    jobs = jobs_of(repository(tmp_path, extra), monkeypatch)
    assert sorted(jobs) == [
        "faster_rcnn_R_101_C4_3x.yaml", "mask_rcnn_R_50_FPN.yaml",
        "mask_rcnn_R_50_FPN_100ep_LSJ.py", "mask_rcnn_R_50_FPN_3x.yaml",
        "retinanet_R_50_FPN_1x.yaml", "run_instant_tests.sh",
    ]  # fmt: skip
    retina = jobs["retinanet_R_50_FPN_1x.yaml"]
    assert [s.path.rsplit("/", 1)[-1] for s in retina.sources] == [
        "retinanet_R_50_FPN_1x.yaml", "Base-RetinaNet.yaml",
    ]  # fmt: skip


def test_a_config_inheriting_a_run_lists_it_and_leaves_it_its_own_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mask2Former: swin/*.yaml over ``../maskformer2_R50_bs16_50ep.yaml`` (a run of the model
    zoo) over ``Base-COCO-InstanceSegmentation.yaml`` (a piece). The R50 config roots its own
    job and is a member of the Swin job with the Base file; each fact is located at the
    file's own path, never ``swin/../Base-...yaml``, so it matches the job's sources."""
    base = "configs/coco/Base-COCO-InstanceSegmentation.yaml"
    r50 = "configs/coco/maskformer2_R50_bs16_50ep.yaml"
    swin = "configs/coco/swin/maskformer2_swin_base_384_bs16_50ep.yaml"
    files = {
        base: "SOLVER:\n  IMS_PER_BATCH: 16\n  MAX_ITER: 368750\nDATALOADER:\n  NUM_WORKERS: 4\n",
        r50: '_BASE_: "Base-COCO-InstanceSegmentation.yaml"\nMODEL:\n  META_ARCHITECTURE: '
        '"MaskFormer"\nSOLVER:\n  BASE_LR: 0.0001\n',
        swin: '_BASE_: "../maskformer2_R50_bs16_50ep.yaml"\nMODEL:\n  BACKBONE:\n    NAME: '
        '"D2SwinTransformer"\n',
    }  # fmt: skip
    root = tmp_path / "m2f"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    jobs = {job.id: job for job in jobs_of(root, monkeypatch).values()}
    assert sorted(jobs) == [r50, swin]
    assert [s.path for s in jobs[swin].sources] == [swin, r50, base]
    sources = {s.path for s in jobs[swin].sources}
    assert jobs[swin].provenance["/training/max_steps"].file == base
    assert {where.file for where in jobs[swin].provenance.values()} <= sources


def test_train_net_line_layout_and_trailing_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        "#!/bin/bash\npython tools/train_net.py --num-gpus 8 --num-machines 2 --resume "
        "--config-file configs/COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_3x.yaml "
        "SOLVER.IMS_PER_BATCH 32 SOLVER.AMP.ENABLED True TEST.EVAL_PERIOD 0 OUTPUT_DIR out\n"
    )
    job = jobs_of(repository(tmp_path, {"train.sh": script}), monkeypatch, "train.sh")["train.sh"]
    assert (
        job_values(job).items()
        >= {
            "/resources/gpus_per_node": 8,
            "/resources/nodes": 2,
            "/resources/world_size": 16,
            "/training/global_batch_size": 32,  # the line beats the config's 16
            "/training/precision": "fp16",
            "/eval/strategy": "no",
            "/training/max_steps": 270000,  # from the config it names
            "/model/name": "mask_rcnn_R_50_FPN",
        }.items()
    )


def test_lazyconfig_line_overrides_and_eval_only_is_no_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = "configs/new_baselines/mask_rcnn_R_50_FPN_100ep_LSJ.py"
    files = {
        "train.sh": f"#!/bin/bash\npython tools/lazyconfig_train_net.py --config-file {config} "
        "--num-gpus 4 train.max_iter=1000 dataloader.train.total_batch_size=16\n",
        "eval.sh": f"#!/bin/bash\npython tools/lazyconfig_train_net.py --config-file {config} "
        "--eval-only train.init_checkpoint=model.pth\n",
    }
    jobs = jobs_of(repository(tmp_path, files), monkeypatch, "train.sh", "eval.sh")
    assert sorted(jobs) == ["train.sh"]
    assert (
        job_values(jobs["train.sh"]).items()
        >= {
            "/training/max_steps": 1000,
            "/training/global_batch_size": 16,
            "/training/precision": "fp16",  # train.amp.enabled = True in the config
            "/resources/gpus_per_node": 4,
        }.items()
    )


def test_a_missing_base_or_config_is_reported_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {"configs/x.yaml": '_BASE_: "../Base-Missing.yaml"\nSOLVER:\n  MAX_ITER: 10\n'}
    job = jobs_of(repository(tmp_path, files), monkeypatch, "configs/x.yaml")["x.yaml"]
    assert [m.path for m in job.missing_references] == ["../Base-Missing.yaml"]


def test_a_base_no_file_can_have_is_no_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = '_BASE_: "a\\x00b"\nSOLVER:\n  MAX_ITER: 10\n'  # YAML's \x00: a NUL in the path
    files = {"configs/x.yaml": text}
    job = jobs_of(repository(tmp_path, files), monkeypatch, "configs/x.yaml")["x.yaml"]
    assert job.missing_references == [] and job.training.max_steps == 10


@given(mappings(["MODEL", "SOLVER", "_BASE_", "TEST", "DATALOADER", "INPUT", "SEED"]))
def test_parse_never_raises(data: dict[str, object]) -> None:
    parse_never_raises(detectron2, data)
