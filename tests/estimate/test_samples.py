"""Vision, diffusion and speech jobs: the catalog's per-sample models, FLOPs per sample at the
job's input, the family's utilisation band, and the framework's default precision."""

from __future__ import annotations

from typing import Any

import pytest

from tests.estimate.jobs import make_job, on_gpus
from trainlint.catalog import resolve_gpu, resolve_model, resolve_sample_model, sample_models
from trainlint.estimate import estimate
from trainlint.estimate.compute import job_band
from trainlint.estimate.inputs import resolve
from trainlint.estimate.mfu import mfu_band
from trainlint.estimate.params import EstimateParams
from trainlint.estimate.samples import TRAINING_PASSES
from trainlint.job import Default, Job

IMAGENET = 1_281_167


def _sample_job(name: str, gpu: str = "A100-80GB", world: int = 8, **sections: Any) -> Job:
    training = {"micro_batch_size": 32, "optimizer": {"name": "adamw"}, "precision": "bf16"}
    training.update(sections.pop("training", {}))
    return make_job(
        model={"name": name},
        resources={"gpu": {"model": gpu}, "world_size": world, "gpus_per_node": min(world, 8)},
        training=training,
        **sections,
    )


def _with_default_precision(job: Job, value: str) -> Job:
    default = Default(value=value, format="timm", key="--amp", file="train.sh", line=1, column=1)
    return job.model_copy(update={"defaults": {"/training/precision": default}})


@pytest.mark.parametrize("entry", sample_models(), ids=lambda m: m.name)
def test_every_name_and_alias_resolves_to_its_entry(entry: Any) -> None:
    for spelling in (entry.name, *entry.aliases):
        found = resolve_sample_model(spelling)
        assert found is not None and found.name == entry.name, spelling


def test_every_entry_is_cited_and_counted() -> None:
    for entry in sample_models():
        assert "http" in entry.source or "benchmarks/count_model_flops.py" in entry.source
        assert entry.params > 0 and entry.forward_flops > 0
        assert entry.image_size or entry.audio_seconds or entry.scaling == "fixed"


def test_the_catalog_covers_the_issue_s_models() -> None:
    names = {m.name for m in sample_models()}
    wanted = {"ResNet-50", "ResNet-101", "ViT-B/16", "ViT-L/16", "ViT-H/14", "ConvNeXt-T"}
    wanted |= {"Swin-T", "Swin-B", "Mask R-CNN R50-FPN", "DETR R50", "SD 1.5 UNet"}
    wanted |= {"SD 2.1 UNet", "SDXL UNet", "SD3 medium MMDiT", "Flux.1 DiT", "Whisper small"}
    wanted |= {"Whisper medium", "Whisper large", "wav2vec2 base", "wav2vec2 large"}
    wanted |= {"HuBERT base", "HuBERT large", "Conformer-L"}
    wanted |= {f"YOLOv8{v}" for v in "nsmlx"} | {f"YOLO11{v}" for v in "nsmlx"}
    assert wanted <= names, wanted - names


@pytest.mark.parametrize("spelling", ["convnext", "wav2vec2", "vit", "gpt2", "resnet", "yolo"])
def test_an_ambiguous_or_foreign_name_stays_unknown(spelling: str) -> None:
    assert resolve_sample_model(spelling) is None


def test_no_alias_means_a_language_model_too() -> None:
    for entry in sample_models():
        for spelling in (entry.name, *entry.aliases):
            assert resolve_model(spelling) is None, spelling


def test_flops_follow_the_image_side_squared_and_the_audio_length() -> None:
    resnet = resolve_sample_model("resnet50")
    wav2vec2 = resolve_sample_model("wav2vec2-base")
    whisper = resolve_sample_model("whisper-small")
    assert resnet and wav2vec2 and whisper
    assert resnet.forward_flops_at(448, None) == pytest.approx(4 * resnet.forward_flops)
    assert wav2vec2.forward_flops_at(None, 20.0) == pytest.approx(2 * wav2vec2.forward_flops)
    assert whisper.forward_flops_at(None, 5.0) == whisper.forward_flops  # padded to 30 s


def test_a_resnet_job_counts_images_not_tokens() -> None:
    job = _sample_job("resnet50", training={"micro_batch_size": 256})
    est = estimate(job)
    assert est.samples_per_step == 8 * 256
    assert est.flops_per_sample == pytest.approx(TRAINING_PASSES * 8.18e9)
    assert est.tokens_per_step is None and est.flops_per_token is None
    assert est.params == 25_557_032 and est.sources["params"] == "catalog"
    assert est.step_time_s is not None and "/samples_per_step" not in est.ranges
    assert "model.seq_len" not in est.unknown and "model.seq_len" not in est.assumed


def test_the_stated_image_size_scales_the_step_and_an_unstated_one_is_named() -> None:
    at_224 = estimate(_sample_job("resnet50"))
    at_448 = estimate(_sample_job("resnet50", data={"image_size": 448}))
    assert at_224.assumed["data.image_size"] == 224
    assert at_224.sources["flops_per_sample"] == "default"
    assert "data.image_size" not in at_448.assumed
    assert at_448.flops_per_sample == pytest.approx(4 * (at_224.flops_per_sample or 0))
    assert at_448.step_time_s == pytest.approx(4 * (at_224.step_time_s or 0), rel=0.01)


def test_the_framework_s_default_image_size_counts_and_a_stated_one_wins() -> None:
    """Ultralytics states ``imgsz`` 640 as its default; a YOLO run at that default is counted
    at it (named in ``assumed``), and a stated size beats it."""
    default = Default(
        value=1280, format="ultralytics", key="imgsz", file="a.yaml", line=1, column=1
    )
    defaults = {"/data/image_size": default}
    job = _sample_job("yolov8n.pt").model_copy(update={"defaults": defaults})
    at_default = estimate(job)
    stated = estimate(
        job.model_copy(update={"data": job.data.model_copy(update={"image_size": 640})})
    )
    assert at_default.assumed["data.image_size"] == 1280
    assert at_default.flops_per_sample == pytest.approx(4 * 3 * 8.7e9)
    assert stated.flops_per_sample == pytest.approx(3 * 8.7e9)
    assert "data.image_size" not in stated.assumed


def test_an_epoch_run_over_imagenet_has_a_length_and_a_cost() -> None:
    training = {"micro_batch_size": 256, "epochs": 90, "dataset_samples": IMAGENET}
    est = estimate(_sample_job("resnet50", training=training))
    assert est.run.steps == 90 * -(-IMAGENET // 2048)
    assert est.run.gpu_hours is not None and "/run/gpu_hours" in est.ranges


def test_a_convnet_takes_the_convnet_band_not_a_language_model_s() -> None:
    resnet = job_band(resolve(_sample_job("resnet50"), EstimateParams()))
    language = mfu_band(25_557_032, resolve_gpu("A100-80GB"), "bf16", 8, False)
    assert resnet.high < language.point
    assert 0.1 < resnet.point < 0.25


def test_an_fp32_convnet_runs_at_the_tf32_peak_on_an_a100_and_a_vit_does_not() -> None:
    fp32 = {"precision": "fp32"}
    resnet = estimate(_sample_job("resnet50", training=fp32))
    tf32 = estimate(_sample_job("resnet50", training={"precision": "tf32"}))
    vit = estimate(_sample_job("vit_base_patch16_224", training=fp32))
    assert resnet.step_time_s == pytest.approx(tf32.step_time_s)
    vit_tf32 = estimate(_sample_job("vit_base_patch16_224", training={"precision": "tf32"}))
    assert (vit.step_time_s or 0) > 4 * (vit_tf32.step_time_s or 0)  # 19.5 vs 156 TFLOP/s


def test_the_framework_s_fp32_default_is_the_precision_not_bf16() -> None:
    job = _sample_job("resnet50", training={"precision": None})
    assumed_bf16 = estimate(job)
    framework = estimate(_with_default_precision(job, "fp32"))
    assert assumed_bf16.assumed["training.precision"] == "bf16"
    assert framework.assumed["training.precision"] == "fp32"
    assert (framework.step_time_s or 0) > (assumed_bf16.step_time_s or 0)
    assert (framework.memory.weights_bytes or 0) == pytest.approx(4 * 25_557_032)


def test_a_stated_precision_beats_the_framework_default() -> None:
    job = _with_default_precision(_sample_job("resnet50", training={"precision": "fp16"}), "fp32")
    est = estimate(job)
    assert "training.precision" not in est.assumed
    assert est.memory.weights_bytes == pytest.approx(2 * 25_557_032)


def test_memory_states_are_known_and_activations_are_not_claimed() -> None:
    est = estimate(_sample_job("stabilityai/stable-diffusion-xl-base-1.0"))
    assert est.memory.weights_bytes == pytest.approx(2 * 2_567_463_684)
    assert est.memory.activations_bytes is None and est.memory.total_bytes is None
    assert "catalog.SDXL UNet.activation_bytes" in est.unknown


def test_an_sdxl_fine_tune_at_1024_px() -> None:
    """diffusers' train_text_to_image_sdxl at --resolution 1024, batch 1, fp16 on one A100:
    3 x 6.76 TFLOPs per image, the UNet band (SDXL's PyTorch inference utilisation and the
    convnet runs): a fraction of a second per step."""
    job = _sample_job(
        "stabilityai/stable-diffusion-xl-base-1.0",
        world=1,
        data={"image_size": 1024},
        training={"micro_batch_size": 1, "precision": "fp16", "max_steps": 10_000},
    )
    est = estimate(job)
    assert est.flops_per_sample == pytest.approx(3 * 6_761_236_398_080)
    low, high = est.ranges["/step_time_s"]
    assert 0.1 < low < (est.step_time_s or 0) < high < 1.0
    band = job_band(resolve(job, EstimateParams()))
    assert band.high == pytest.approx(0.351)


def test_a_language_model_job_is_unchanged() -> None:
    job = on_gpus({"name": "gpt2", "seq_len": 1024}, "H100", 8, micro_batch_size=8)
    est = estimate(job)
    assert est.samples_per_step is None and est.flops_per_sample is None
    assert est.tokens_per_step == 8 * 8 * 1024
