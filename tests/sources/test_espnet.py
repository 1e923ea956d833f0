"""ESPnet2 training YAML: every fixture's facts with their places, what each batch type and
epoch cap means, recognition against the toolkits that copied ESPnet's layout, typos, the
launch line, arbitrary values, and a checked job end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sources.helpers import FactRow, near_misses, rows, values
from trainlint import cli
from trainlint.assemble import assemble
from trainlint.job import Location
from trainlint.sources import espnet, read_document
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures"
ESPNET = FIXTURES / "espnet"


def read(path: Path) -> Document:
    doc = read_document(Input(str(path), path.read_text()))
    assert isinstance(doc, Document)
    return doc


def parsed(text: str) -> dict[str, Any]:
    """pointer → value of an ESPnet config given as text."""
    return {fact.pointer: fact.value for fact in espnet.parse(Input("train.yaml", text)).facts}


OPTIMIZER = ["/training/optimizer/name", "/training/optimizer/family",
             "/training/optimizer/eight_bit", "/training/optimizer/experimental"]  # fmt: skip


def optimizer(name: str, family: str, line: int) -> list[FactRow]:
    written = [name, family, False, False]
    return [(pointer, value, line, 1) for pointer, value in zip(OPTIMIZER, written, strict=True)]


EXPECTED: dict[str, list[FactRow]] = {
    # numel batches count feature elements: no batch; amp, 4-step accumulation, 50 epochs
    "asr_conformer.yaml": [
        ("/training/grad_accum_steps", 4, 44, 1),
        ("/data/num_workers", 4, 41, 1),
        ("/checkpoint/keep_last", 10, 52, 1),
        *optimizer("adam", "adamw", 54),
        ("/training/epochs", 50.0, 45, 1),
        ("/training/precision", "fp16", 40, 1),
        ("/checkpoint/every_epochs", 1.0, 45, 1),
        ("/checkpoint/strategy", "epoch", 45, 1),
    ],
    # the chunk iterator's batch_size counts chunks of all GPUs together
    "enh_conv_tasnet.yaml": [
        ("/data/num_workers", 4, 8, 1),
        ("/checkpoint/keep_last", 1, 24, 1),
        *optimizer("adam", "adamw", 1),
        ("/training/epochs", 100.0, 3, 1),
        ("/training/global_batch_size", 8, 5, 1),
        ("/checkpoint/every_epochs", 1.0, 3, 1),
        ("/checkpoint/strategy", "epoch", 3, 1),
    ],
    # a folded batch shrinks with the utterance length: batch_size is no batch
    "lm.yaml": [
        ("/checkpoint/keep_last", 1, 14, 1),
        *optimizer("sgd", "sgd", 4),
        ("/training/epochs", 20.0, 7, 1),
        ("/checkpoint/every_epochs", 1.0, 7, 1),
        ("/checkpoint/strategy", "epoch", 7, 1),
    ],
    # 45 epochs of 15000 unsorted batches of 256 utterances: steps, and a save per epoch
    "s2t_owsm.yaml": [
        ("/training/grad_accum_steps", 1, 103, 1),
        ("/data/num_workers", 4, 118, 1),
        ("/training/seed", 42, 120, 1),
        ("/checkpoint/keep_last", 5, 115, 1),
        *optimizer("adamw", "adamw", 87),
        ("/training/max_steps", 675_000, 105, 1),
        ("/training/global_batch_size", 256, 102, 1),
        ("/training/precision", "fp16", 117, 1),
        ("/checkpoint/every_steps", 15_000, 104, 1),
        ("/checkpoint/strategy", "steps", 104, 1),
    ],
    # no amp: the model trains in train_dtype
    "tts_tacotron2.yaml": [
        ("/training/grad_accum_steps", 1, 59, 1),
        ("/data/num_workers", 1, 65, 1),
        ("/training/seed", 0, 70, 1),
        ("/checkpoint/keep_last", 5, 68, 1),
        *optimizer("adam", "adamw", 47),
        ("/training/epochs", 200.0, 56, 1),
        ("/training/precision", "fp32", 66, 1),
        ("/checkpoint/every_epochs", 1.0, 56, 1),
        ("/checkpoint/strategy", "epoch", 56, 1),
    ],
    # GAN TTS: optim2/scheduler2 are known; 5000 epochs of 1000 iterations
    "tts_vits.yaml": [
        ("/training/grad_accum_steps", 1, 158, 1),
        ("/data/num_workers", 4, 165, 1),
        ("/training/seed", 777, 170, 1),
        ("/checkpoint/keep_last", 5, 168, 1),
        *optimizer("adamw", "adamw", 132),
        ("/training/max_steps", 5_000_000, 157, 1),
        ("/training/precision", "fp16", 166, 1),
        ("/logging/every_steps", 50.0, 167, 1),
        ("/checkpoint/every_steps", 1000, 156, 1),
        ("/checkpoint/strategy", "steps", 156, 1),
    ],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_facts_with_places(name: str) -> None:
    doc = read(ESPNET / name)
    assert (doc.format, doc.role, doc.confidence) == ("espnet", "config", 0.95)
    assert rows(doc) == EXPECTED[name]
    assert doc.unknown_keys == [] and doc.references == [] and doc.errors == []


def test_every_fixture_is_tested() -> None:
    assert sorted(p.name for p in ESPNET.glob("*.yaml")) == sorted(EXPECTED)


def test_the_defaults_are_those_of_abstask_for_what_a_file_leaves_unset() -> None:
    lm = read(ESPNET / "lm.yaml")
    assert [(d.pointer, d.value, d.key, d.location.line) for d in lm.defaults] == [
        ("/training/seed", 0, "seed", 1),
        ("/data/num_workers", 1, "num_workers", 1),
    ]  # keep_nbest_models is set (1)
    vits = read(ESPNET / "tts_vits.yaml")
    assert vits.defaults == []  # seed, workers and n-best all set


def test_unset_keep_nbest_models_keeps_ten_which_is_stated_for_the_storage_estimate() -> None:
    bare = espnet.parse(Input("train.yaml", "batch_bins: 100\nmax_epoch: 3\n"))
    kept = [(f.value, f.location.line) for f in bare.facts if f.pointer == "/checkpoint/keep_last"]
    assert kept == [(10, 2)]


@pytest.mark.parametrize(
    ("lines", "batch"),
    [
        ("batch_type: unsorted\nbatch_size: 32", 32),
        ("batch_type: sorted\nbatch_size: 32\naccum_grad: 4", 128),
        ("batch_type: folded\nbatch_size: 32", None),
        ("batch_size: 32", None),  # folded is the default
        ("batch_type: numel\nbatch_bins: 1000000\nbatch_size: 32", None),
        ("batch_type: length\nbatch_bins: 1000000", None),
        ("iterator_type: chunk\nbatch_type: folded\nbatch_size: 8\naccum_grad: 2", 16),
        ("iterator_type: category\nbatch_type: unsorted\nbatch_size: 8", None),
        ("batch_type: unsorted\nbatch_size: ${oc.env:B}", None),
    ],
)
def test_only_a_batch_of_samples_is_a_global_batch(lines: str, batch: int | None) -> None:
    found = parsed(f"max_epoch: 3\n{lines}\n")
    assert found.get("/training/global_batch_size") == batch
    assert "/training/micro_batch_size" not in found  # ESPnet splits the batch over the GPUs


@pytest.mark.parametrize(
    ("lines", "length", "checkpoint"),
    [
        ("max_epoch: 10", ("/training/epochs", 10.0), ("/checkpoint/every_epochs", 1.0)),
        ("max_epoch: 10\nnum_iters_per_epoch: 100\naccum_grad: 4",
         ("/training/max_steps", 250), ("/checkpoint/every_steps", 25)),
        ("max_epoch: 10\nnum_iters_per_epoch: none",
         ("/training/epochs", 10.0), ("/checkpoint/every_epochs", 1.0)),
        ("max_epoch: 10\nnum_iters_per_epoch: 2\naccum_grad: 4", None, None),  # no step at all
        ("max_epoch: 10\nnum_iters_per_epoch: 100\niterator_type: chunk", None, None),  # samples
        ("max_epoch: 10.5\nbatch_bins: 100", None, ("/checkpoint/every_epochs", 1.0)),
    ],
)  # fmt: skip
def test_an_epoch_is_a_pass_unless_num_iters_per_epoch_caps_it(
    lines: str, length: tuple[str, Any] | None, checkpoint: tuple[str, Any] | None
) -> None:
    found = parsed(f"{lines}\nbatch_type: numel\n")
    lengths = {p: v for p, v in found.items() if p in ("/training/epochs", "/training/max_steps")}
    assert lengths == (dict([length]) if length else {})
    intervals = {p: v for p, v in found.items() if p.startswith("/checkpoint/every_")}
    assert intervals == (dict([checkpoint]) if checkpoint else {})


@pytest.mark.parametrize(
    ("lines", "precision"),
    [
        ("use_amp: true", "fp16"),
        ("use_amp: true\ntrain_dtype: float32", "fp16"),
        ("use_amp: false", "fp32"),
        ("use_amp: false\ntrain_dtype: float16", "fp16-true"),
        ("train_dtype: float64", "fp64"),
        ("train_dtype: bfloat16", None),  # not one of ESPnet's choices
        ("use_amp: maybe", None),
        ("", None),  # ESPnet's default is fp32, but nothing is stated
    ],
)
def test_precision_is_amp_else_the_training_dtype(lines: str, precision: str | None) -> None:
    found = parsed(f"max_epoch: 3\nbatch_bins: 100\n{lines}\n")
    assert found.get("/training/precision") == precision


@pytest.mark.parametrize(
    ("lines", "every"),
    [("log_interval: 100", 100.0), ("log_interval: 100\naccum_grad: 4", 25.0),
     ("log_interval: 10\naccum_grad: 4", None), ("log_interval: null", None)],
)  # fmt: skip
def test_log_interval_counts_mini_batches(lines: str, every: float | None) -> None:
    assert parsed(f"max_epoch: 3\nbatch_bins: 100\n{lines}\n").get("/logging/every_steps") == every


def test_keep_nbest_models_keeps_the_largest_n_best() -> None:
    assert parsed("max_epoch: 3\nkeep_nbest_models: [5, 10]\n")["/checkpoint/keep_last"] == 10


def test_deepspeed_decides_what_its_config_holds(in_tmp: Path) -> None:
    """The recipe's conf/deepspeed.json, named from conf/tuning/ as the recipe root sees it."""
    (in_tmp / "conf" / "tuning").mkdir(parents=True)
    (in_tmp / "conf" / "deepspeed.json").write_text('{"zero_optimization": {"stage": 2}}\n')
    config = in_tmp / "conf" / "tuning" / "train.yaml"
    config.write_text(
        "max_epoch: 3\nbatch_type: unsorted\nbatch_size: 64\naccum_grad: 4\nuse_amp: true\n"
        "optim: adam\nnum_workers: 4\nuse_deepspeed: true\ndeepspeed_config: conf/deepspeed.json\n"
    )
    doc = read(config)
    assert {f.pointer: f.value for f in doc.facts} == {
        "/training/epochs": 3.0,
        "/data/num_workers": 4,
        "/training/parallelism/strategy": "deepspeed",
        "/checkpoint/every_epochs": 1.0,
        "/checkpoint/strategy": "epoch",
    }
    (job,) = assemble([Path("conf/tuning/train.yaml")])
    assert [(s.path, s.format) for s in job.sources] == [
        ("conf/tuning/train.yaml", "espnet"), ("conf/deepspeed.json", "deepspeed")
    ]  # fmt: skip
    assert job.missing_references == [] and job.training.parallelism.zero_stage == 2
    unused = espnet.parse(Input("train.yaml", "max_epoch: 3\ndeepspeed_config: ds.json\n"))
    assert unused.references == []  # the Trainer never opens it


def test_a_near_miss_of_an_espnet_key_is_a_typo_and_model_keys_are_known() -> None:
    text = (
        "batch_type: numel\nmax_epochs: 10\naccum_grads: 2\nbatch_bin: 100\nkeep_nbest_model: 3\n"
        "encoder: conformer\nencoder_conf: {}\nmasker: hubert\nmasker_conf: {}\n"
        "optim2: adam\nscheduler2_conf: {}\ntts: vits\ninit: none\nnormalize: null\n"
        "frontend_conf: {}\nspecaug: specaug\nmodel_conf: {}\ntoken_list: tokens.txt\n"
        "max_epoch_x: 3\n"
    )
    doc = read_document(Input("train.yaml", text))
    assert isinstance(doc, Document) and doc.format == "espnet"
    assert near_misses(doc) == [
        ("max_epochs", "max_epoch", 2),
        ("accum_grads", "accum_grad", 3),
        ("batch_bin", "batch_bins", 4),
        ("keep_nbest_model", "keep_nbest_models", 5),
        ("max_epoch_x", "max_epoch", 19),
    ]


OTHERS = sorted(
    path
    for path in FIXTURES.rglob("*")
    if path.is_file() and path.suffix in (".yaml", ".yml") and ESPNET not in path.parents
)


@pytest.mark.parametrize("path", OTHERS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_other_formats_fixtures_are_not_espnet(path: Path) -> None:
    assert espnet.recognise(Input(str(path), path.read_text())) == 0.0


@pytest.mark.parametrize("name", ["wenet_u2pp_conformer.yaml", "speechbrain_rnnlm.yaml"])
def test_toolkits_that_copied_espnet_are_not_claimed(name: str) -> None:
    path = ESPNET / "others" / name
    text = path.read_text()
    assert espnet.recognise(Input(str(path), text)) == 0.0
    marked = text + "max_epoch: 3\naccum_grad: 2\nbatch_bins: 100\n"  # even with ESPnet's keys
    assert espnet.recognise(Input(str(path), marked)) == 0.0
    assert getattr(read_document(Input(str(path), text)), "format", None) != "espnet"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max_epoch: 3\naccum_grad: 2\n", 0.95),
        ("max_epoch: 3\nencoder: conformer\nencoder_conf: {}\n", 0.95),
        ("max_epoch: 3\n", 0.0),  # one generic trainer key
        ("encoder: conformer\nencoder_conf: {}\noptim: adam\noptim_conf: {}\n", 0.0),
        ("beam_size: 60\nctc_weight: 0.3\nlm_weight: 0.6\n", 0.0),  # a decoding config
        ("train_conf: {max_epoch: 3, accum_grad: 1}\nencoder: x\nencoder_conf: {}\n", 0.0),
        ("max_epoch: 3\naccum_grad: 2\ntrain_conf: {}\n", 0.0),  # FunASR
        ("max_epoch: 3\naccum_grad: 2\ndataset_conf: {}\n", 0.0),  # WeNet
        ("max_epoch: 3\naccum_grad: 2\nmodel: !new:torch.nn.Linear\n", 0.0),  # HyperPyYAML
        ("per_device_train_batch_size: 4\nmax_epoch: 3\naccum_grad: 2\n", 0.95),
        ("- max_epoch\n- accum_grad\n", 0.0),
    ],
)
def test_recognition(text: str, expected: float) -> None:
    assert espnet.recognise(Input("train.yaml", text)) == expected


def test_espnet_configs_are_yaml() -> None:
    text = json.dumps({"max_epoch": 3, "accum_grad": 2, "batch_bins": 100})
    assert espnet.recognise(Input("train.json", text)) == 0.0


def test_a_launch_line_of_an_espnet_trainer_is_read_flag_by_flag(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/bash\npython -m espnet2.bin.asr_train --ngpu 4 --max_epoch 10 --use_amp true"
        " --seed 3 --batch_size 64 --config conf/train.yaml\n"
    )
    found = {(f.pointer, f.value) for f in read(script).facts}
    assert {("/resources/gpus_per_node", 4), ("/training/epochs", 10.0),
            ("/training/precision", "fp16"), ("/training/seed", 3)} <= found  # fmt: skip
    assert not any(pointer.startswith("/training/global") for pointer, _ in found)
    doc = read(script)
    assert [(d.pointer, d.value) for d in doc.defaults] == [("/data/num_workers", 1)]
    assert [r.path for r in doc.references] == ["conf/train.yaml"]
    other = tmp_path / "other.sh"
    other.write_text("#!/bin/bash\npython train.py --ngpu 4 --max_epoch 10\n")
    assert "/resources/gpus_per_node" not in {f.pointer for f in read(other).facts}


def test_an_espnet_trainer_s_flags_are_read_by_espnet_alone(tmp_path: Path) -> None:
    """Flags the Trainer or Megatron know mean nothing (or something else) to ESPnet."""
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/bash\npython -m espnet2.bin.asr_train --ngpu 2 --save_strategy all"
        " --log_interval 5 --wandb_project asr --save_steps 10\n"
    )
    found = {f.pointer for f in read(script).facts}
    assert "/resources/gpus_per_node" in found
    assert not found & {"/checkpoint/strategy", "/checkpoint/every_steps", "/logging/reporters"}


HERE = Location(file="run.sh", line=2, column=5)
DOCUMENTED = {pointer for pointers in espnet.keys().values() for pointer in pointers}
KEYS = [
    "max_epoch", "num_iters_per_epoch", "accum_grad", "batch_size", "batch_bins", "batch_type",
    "iterator_type", "use_amp", "train_dtype", "keep_nbest_models", "num_workers", "ngpu",
    "seed", "optim", "log_interval", "log_level", "use_deepspeed", "deepspeed_config",
    "detect_anomaly", "use_wandb", "patience", "encoder", "encoder_conf",
]  # fmt: skip
WORDS = st.sampled_from(["unsorted", "sorted", "folded", "numel", "chunk", "sequence",
                         "float16", "float64", "adamw", "none", "true", "DEBUG"])  # fmt: skip
CONFIGS = st.dictionaries(st.sampled_from(KEYS), values() | WORDS, max_size=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CONFIGS)
def test_arbitrary_values_never_raise_nor_state_an_undocumented_fact(data: dict[str, Any]) -> None:
    file = Input("train.yaml", yaml.safe_dump({"max_epoch": 1, "accum_grad": 1, **data}))
    assert espnet.recognise(file) == 0.95
    doc = espnet.parse(file)
    assert {fact.pointer for fact in doc.facts} <= DOCUMENTED
    assert all(fact.location.line >= 1 for fact in doc.facts)
    for key, value in data.items():
        flags = espnet.cli_facts(f"--{key}", str(value), HERE)
        assert {fact.pointer for fact in flags} <= DOCUMENTED


def test_a_checked_job_gets_the_findings_a_reviewer_expects(
    in_tmp: Path,
) -> None:
    config = in_tmp / "conf" / "train_tacotron2.yaml"
    config.parent.mkdir()
    text = (ESPNET / "tts_tacotron2.yaml").read_text()
    config.write_text(text + "# trainlint: gpu=A100 gpus=4\n")
    result = CliRunner().invoke(cli.main, ["check", ".", "--format", "json"])
    report = json.loads(result.output)
    found = {(f["rule"], f["line"]) for f in report["findings"]}
    assert found == {("TL105", 66), ("TL106", 65), ("TL401", 1), ("TL103", 78)}
    precision = next(f["message"] for f in report["findings"] if f["rule"] == "TL105")
    assert precision.startswith("fp32 training on the A100-40GB, whose bf16 tensor cores peak ~16")
    (job,) = report["jobs"]
    assert job["resources"]["world_size"] == 4 and job["training"]["epochs"] == 200.0
    estimates = job["estimates"]
    assert estimates["mixed_precision"]["peak_ratio"] == 16.0
    assert estimates["price_per_gpu_hour"] > 0 and estimates["checkpoint"]["kept"] == 5
