"""Ultralytics: the real cfg/default.yaml with its places, recognition against the YAMLs of a
YOLO project that are no training cfg, the ``yolo train key=value`` line (settings, never
files), ``YOLO(...).train(...)`` calls read without running them, and jobs end to end."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.sources.helpers import job_values, mappings, near_misses, parse_never_raises, rows
from trainlint.assemble import assemble
from trainlint.job import Job
from trainlint.sources import read_document, ultralytics
from trainlint.sources.base import Document, Input

DEFAULT_YAML = Path(__file__).parent / "fixtures" / "ultralytics" / "default.yaml"


def read(path: str, text: str) -> Document:
    doc = read_document(Input(path, text))
    assert isinstance(doc, Document), doc
    return doc


def jobs(tmp_path: Path, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list[Job]:
    """The jobs of a repository made of ``files`` (a git work tree), checked from its root: job
    ids and the names that say a file's purpose are relative to it."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return assemble(sorted(Path(name) for name in files))


def test_default_yaml_states_ultralytics_defaults_at_their_keys() -> None:
    doc = read("cfg/default.yaml", DEFAULT_YAML.read_text())
    assert doc.format == "ultralytics"
    assert rows(doc) == [
        ("/training/epochs", 100.0, 12, 1),
        ("/training/global_batch_size", 64, 15, 1),  # 16 a step, accumulated to nbs 64
        ("/training/grad_accum_steps", 4, 15, 1),
        ("/data/image_size", 640, 16, 1),
        ("/data/num_workers", 8, 21, 1),
        ("/training/precision", "fp16", 35, 1),
        ("/checkpoint/every_epochs", 1.0, 18, 1),  # last.pt after every epoch
        ("/checkpoint/strategy", "epoch", 18, 1),
        ("/checkpoint/keep_last", 2, 18, 1),  # last.pt and best.pt
        ("/eval/strategy", "epoch", 50, 1),
        ("/training/seed", 0, 28, 1),
        ("/training/compile", False, 40, 1),
    ]
    assert doc.unknown_keys == []  # the key set is the real file's


def test_a_near_miss_of_a_cfg_key_is_a_typo() -> None:
    doc = read("custom.yaml", "epochs: 30\nimgsz: 1280\nclose_mosaic: 3\nmosaik: 0.5\n")
    assert near_misses(doc) == [("mosaik", "mosaic", 4)]


@pytest.mark.parametrize(
    "text",
    [
        "path: ../datasets/coco8\ntrain: images/train\nval: images/val\nnames:\n  0: person\n",
        "nc: 80\nscales:\n  n: [0.33, 0.25, 1024]\nbackbone: []\nhead: []\n",
        # YOLOv5's hyp.scratch-low.yaml shares the augmentation keys
        "lr0: 0.01\nlrf: 0.01\nwarmup_epochs: 3.0\nanchor_t: 4.0\nfl_gamma: 0.0\nmosaic: 1.0\n",
        "tracker_type: botsort\ntrack_high_thresh: 0.5\n",
        # YOLOv5's opt.yaml: its own option names beside Ultralytics' (noval is no typo of val)
        "weights: yolov5s.pt\nepochs: 300\nbatch_size: 16\nimgsz: 640\nnoval: false\n"
        "single_cls: false\npatience: 100\nsave_period: -1\n",
    ],
    ids=["dataset", "model", "yolov5-hyp", "tracker", "yolov5-opt"],
)
def test_other_yaml_of_a_yolo_project_is_not_a_training_cfg(text: str) -> None:
    assert ultralytics.recognise(Input("x.yaml", text)) == 0.0


def test_a_finished_runs_args_yaml_roots_no_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = DEFAULT_YAML.read_text() + "save_dir: runs/detect/train\n"
    assert jobs(tmp_path, {"runs/detect/train/args.yaml": record}, monkeypatch) == []


def test_batch_and_device_spellings() -> None:
    settings = "epochs: 3\nimgsz: [640, 640]\nbatch: {}\nsave_period: 5\nclose_mosaic: 0\n"
    auto = ultralytics.parse(Input("c.yaml", settings.format(-1))).facts
    assert {(f.pointer, f.value) for f in auto} >= {
        ("/training/global_batch_size", None),  # AutoBatch: chosen at run time
        ("/training/grad_accum_steps", None),
        ("/data/image_size", 640),
        ("/checkpoint/every_epochs", 5.0),
        ("/checkpoint/keep_last", None),  # every epochN.pt stays
    }
    devices = (0, "0,1,2,3", [0, 1], "cuda:0", -1, "cpu", None)
    assert [ultralytics.gpu_count(device) for device in devices] == [
        1, 4, 2, 1, 1, None, None,
    ]  # fmt: skip


def test_yolo_command_line_settings_are_facts_and_never_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        "#!/bin/bash\n#SBATCH --gres=gpu:4\n"
        "yolo detect train data=coco.yaml model=yolov8m.pt epochs=300 imgsz=640 batch=128 "
        "device=0,1,2,3 workers=8 amp=False time=10.5 cfg=missing.yaml\n"
    )
    [job] = jobs(tmp_path, {"train.sbatch": script}, monkeypatch)
    assert (
        job_values(job).items()
        >= {
            "/model/name": "yolov8m",
            "/training/epochs": None,  # time= overrides epochs
            "/resources/time_limit_s": 37800.0,
            "/data/image_size": 640,
            "/training/global_batch_size": 128,
            "/training/grad_accum_steps": 1,
            "/resources/gpus_per_node": 4,
            "/data/num_workers": 8,
            "/training/precision": "fp32",
        }.items()
    )
    assert job.missing_references == []  # coco.yaml, yolov8m.pt, missing.yaml: Ultralytics' to find


def test_a_cfg_named_on_the_command_line_is_read_and_the_line_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = "epochs: 30\nimgsz: 1280\nclose_mosaic: 3\nsave_period: 10\n"
    line = "#!/bin/bash\nyolo train cfg=cfg/custom.yaml model=yolo11n.pt epochs=50\n"
    [job] = jobs(tmp_path, {"run.sh": line, "cfg/custom.yaml": cfg}, monkeypatch)
    assert [source.path.rsplit("/", 1)[-1] for source in job.sources] == ["run.sh", "custom.yaml"]
    stated = job_values(job)
    assert (stated["/training/epochs"], stated["/data/image_size"]) == (50.0, 1280)
    assert stated["/checkpoint/every_epochs"] == 10.0


def test_yolo_subcommand_as_a_setting_and_predict_is_no_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "train.sh": "#!/bin/bash\nyolo task=detect mode=train model=yolov8s.pt epochs=5\n",
        "predict.sh": "#!/bin/bash\nyolo mode=predict model=best.pt source=videos/\n",
    }
    assert [job.id.rsplit("/", 1)[-1] for job in jobs(tmp_path, files, monkeypatch)] == ["train.sh"]


TRAIN_PY = """\
import argparse
from ultralytics import YOLO

raise SystemExit("never imported: trainlint reads this file with ast")

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    model = YOLO("yolo11s.pt")
    model.train(data="data.yaml", epochs=args.epochs, imgsz=960, batch=16, amp=False,
                device=[0, 1], save_period=-1, patiense=30)

if __name__ == "__main__":
    main()
"""


def test_python_train_call_is_read_without_running_it() -> None:
    doc = read("train.py", TRAIN_PY)
    assert doc.format == "ultralytics"
    assert {f.pointer: f.value for f in doc.facts} == {
        "/model/name": "yolo11s",
        "/data/image_size": 960,
        "/training/global_batch_size": 64,
        "/training/grad_accum_steps": 4,
        "/training/precision": "fp32",
        "/resources/gpus_per_node": 2,
        "/checkpoint/every_epochs": 1.0,
        "/checkpoint/strategy": "epoch",
        "/checkpoint/keep_last": 2,
    }
    assert near_misses(doc) == [("patiense", "patience", 12)]
    defaults = {d.pointer: d.value for d in doc.defaults}
    assert defaults["/training/epochs"] == 100.0  # the script's argparse default, not a guess
    assert "epochs" in doc.arguments


def test_a_torch_module_train_call_beside_ultralytics_is_not_claimed() -> None:
    text = (
        "from transformers import Trainer, TrainingArguments\nfrom ultralytics import YOLO\n"
        "detector = YOLO('yolov8n.pt')\nnet.train()\n"
        "args = TrainingArguments(output_dir='out', num_train_epochs=3)\n"
    )
    assert ultralytics.recognise(Input("train.py", text)) == 0.0
    assert read("train.py", text).format == "python"


def test_a_launch_flag_reaches_the_train_call_through_argparse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {"train.py": TRAIN_PY, "run.sh": "#!/bin/bash\npython train.py --epochs 7\n"}
    [job] = jobs(tmp_path, files, monkeypatch)
    assert job_values(job)["/training/epochs"] == 7.0


@given(mappings(sorted(ultralytics.KNOWN_KEYS)))
def test_parse_never_raises(data: dict[str, object]) -> None:
    parse_never_raises(ultralytics, data)


@given(st.text(max_size=20) | st.lists(st.integers(-3, 9), max_size=4) | st.integers())
def test_gpu_count_never_raises(value: object) -> None:
    count = ultralytics.gpu_count(value)
    assert count is None or count >= 1
