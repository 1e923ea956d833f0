"""Python training code through ``ast`` only: exact facts and positions, recognition, and
proof that nothing in the file is ever run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from trainlint.assemble import assemble
from trainlint.errors import SourceError
from trainlint.estimate import estimate
from trainlint.sources import python_code, read_document
from trainlint.sources.base import Document, Input, Skipped
from trainlint.sources.python.literal import UNKNOWN, Positions, literal
from trainlint.sources.structured import MAX_BYTES

FIXTURES = Path(__file__).parent / "fixtures" / "python"


def read(name: str, text: str | None = None) -> Document | Skipped:
    return read_document(Input(name, (FIXTURES / name).read_text() if text is None else text))


def facts(doc: Document | Skipped) -> list[tuple[str, object, int, int]]:
    assert isinstance(doc, Document) and doc.format == "python" and doc.role == "config", doc
    found = [(f.pointer, f.value, f.location.line, f.location.column) for f in doc.facts]
    return sorted(found, key=lambda f: (f[2], f[3], f[0]))


def test_nanogpt_config_module() -> None:
    doc = read("nanogpt_config.py")
    assert facts(doc) == [
        ("/logging/reporters", ["wandb"], 4, 1),
        ("/training/micro_batch_size", 12, 9, 1),
        ("/model/seq_len", 1024, 10, 1),
        ("/training/global_batch_size", 480, 11, 1),  # 5 * 8 micro-batches across ranks
        ("/model/layers", 12, 13, 1),
        ("/model/heads", 12, 14, 1),
        ("/model/hidden", 768, 15, 1),
        ("/model/source", "default", 15, 1),  # nanoGPT's vocabulary without a meta.pkl
        ("/model/vocab", 50304, 15, 1),
        ("/training/max_steps", 600000, 17, 1),
        ("/checkpoint/every_steps", 2000.0, 19, 1),
        ("/eval/every_steps", 2000.0, 19, 1),
        ("/logging/every_steps", 10.0, 21, 1),
        ("/training/precision", "bf16", 23, 1),
        ("/training/compile", True, 24, 1),
    ]
    assert isinstance(doc, Document) and doc.confidence == 0.8
    assert [(u.key, u.suggestion, u.line, u.column) for u in doc.unknown_keys] == [
        ("n_layers", "n_layer", 25, 1)
    ]


_SCRATCH = "n_layer = 12\nn_head = 12\nn_embd = 768\nblock_size = 1024\nmax_iters = 5000\n"


def test_nanogpt_model_gets_the_default_vocabulary_and_an_estimated_size(in_tmp: Path) -> None:
    """train.py: ``vocab_size = meta_vocab_size if ... else 50304``; no config sets it."""
    (in_tmp / "train_gpt2.py").write_text("# trainlint: gpu=H100 gpus=1\n" + _SCRATCH)
    (job,) = assemble([in_tmp / "train_gpt2.py"])
    assert (job.model.vocab, job.model.layers, job.model.source) == (50304, 12, "default")
    assert job.provenance["/model/vocab"].line == 4  # n_embd, the dimension it sizes
    assert estimate(job).params == pytest.approx(124e6, rel=0.01)  # GPT-2 small


@pytest.mark.parametrize(
    "extra",
    ["dataset = 'shakespeare_char'\n",  # meta.pkl holds the character vocabulary
     "init_from = 'resume'\n", "init_from = 'gpt2-xl'\n", "vocab_size = 32000\n"],
)  # fmt: skip
def test_nanogpt_vocabulary_is_not_defaulted_where_train_py_takes_another(extra: str) -> None:
    doc = read_document(Input("train_x.py", _SCRATCH + extra))
    assert isinstance(doc, Document)
    assert not [f for f in doc.facts if f.pointer == "/model/source"]
    assert [f.value for f in doc.facts if f.pointer == "/model/vocab"] in ([], [32000])


def test_nanogpt_train_script_reads_only_what_is_unconditional() -> None:
    doc = read("nanogpt_train.py")
    assert facts(doc) == [
        ("/eval/every_steps", 250.0, 7, 1),  # always_save_checkpoint = False: no checkpoint fact
        ("/logging/every_steps", 1.0, 8, 1),
        ("/training/micro_batch_size", 64, 10, 1),
        ("/model/seq_len", 256, 11, 1),
        ("/model/layers", 6, 12, 1),
        ("/model/source", "default", 12, 1),
        ("/model/vocab", 50304, 12, 1),
        ("/training/compile", False, 14, 1),  # ``if compile: torch.compile(...)`` is guarded
        ("/env/NCCL_DEBUG", "INFO", 17, 1),
        ("/logging/anomaly_detection", True, 28, 5),  # the __main__ guard is not a condition
    ]
    # Code, not a config module: ptdtype is fine.
    assert isinstance(doc, Document) and doc.unknown_keys == []


def test_trl_sft_config_keywords_and_reference() -> None:
    doc = read("trl_sft.py")
    assert facts(doc) == [
        ("/training/micro_batch_size", 4, 12, 9),
        ("/training/grad_accum_steps", 8, 13, 9),
        ("/training/epochs", 3.0, 15, 9),
        ("/training/precision", "bf16", 16, 9),
        ("/checkpoint/strategy", "steps", 17, 9),
        ("/checkpoint/every_steps", 500.0, 18, 9),
        ("/checkpoint/keep_last", 2, 19, 9),
        ("/logging/every_steps", 10.0, 20, 9),
        ("/model/seq_len", 2048, 21, 9),
        ("/logging/reporters", ["wandb"], 22, 9),
        ("/training/parallelism/strategy", "deepspeed", 23, 9),
    ]  # seed=MODEL is a name, not a literal: unknown
    assert isinstance(doc, Document) and doc.confidence == 0.9
    assert [(r.path, r.role, r.location.line, r.location.column) for r in doc.references] == [
        ("configs/ds_zero2.json", "deepspeed", 23, 9)
    ]


def test_lightning_trainer_and_model_checkpoint() -> None:
    assert facts(read("lightning_train.py")) == [
        ("/checkpoint/every_steps", 1000.0, 8, 5),
        ("/checkpoint/keep_last", 3, 9, 5),
        ("/checkpoint/save_optimizer", True, 10, 5),
        ("/resources/gpus_per_node", 8, 14, 5),
        ("/resources/nodes", 2, 15, 5),
        ("/training/precision", "bf16", 16, 5),
        ("/training/max_steps", 50000, 17, 5),
        ("/resources/time_limit_s", 129600.0, 18, 5),
        ("/logging/every_steps", 25.0, 19, 5),
        ("/training/grad_accum_steps", 4, 20, 5),
        ("/training/parallelism/strategy", "deepspeed", 21, 5),
        ("/training/parallelism/zero_stage", 2, 21, 5),
        ("/logging/profiler/enabled", True, 22, 5),
        ("/logging/profiler/scheduled", False, 22, 5),
    ]


def test_deepspeed_dict_read_through_the_deepspeed_table() -> None:
    doc = read("deepspeed_dict.py")
    assert facts(doc) == [
        ("/training/parallelism/strategy", "deepspeed", 5, 1),
        ("/training/micro_batch_size", 2, 6, 5),  # "auto" accumulation stays unknown
        ("/training/precision", "bf16", 8, 14),
        ("/training/parallelism/zero_stage", 3, 10, 9),
        ("/training/parallelism/offload_params", True, 11, 27),
        ("/training/compile", True, 17, 10),
        ("/logging/profiler/enabled", True, 18, 6),
        ("/logging/profiler/scheduled", False, 18, 6),  # no schedule=: every step
    ]
    assert isinstance(doc, Document) and doc.confidence == 0.85


def test_dataclass_defaults() -> None:
    assert facts(read("dataclass_config.py")) == [
        ("/training/micro_batch_size", 32, 8, 5),
        ("/model/seq_len", 2048, 9, 5),
        ("/training/max_steps", 1000, 10, 5),
        ("/checkpoint/every_steps", 100.0, 11, 5),
        ("/logging/every_steps", 16.0, 12, 5),
        ("/training/grad_accum_steps", 4, 13, 5),
        ("/training/precision", "bf16", 15, 5),
    ]


def test_dataclass_plain_class_attributes_count() -> None:
    text = (
        "from dataclasses import dataclass\n\n@dataclass\nclass Hyperparameters:\n"
        "    train_seq_len = 48 * 1024\n    num_iterations = 1770\n"
        "    val_loss_every = 125\n    vocab_size = 50257\n    save_checkpoint = False\n"
        "args = Hyperparameters()\n"
    )
    assert facts(read("train_gpt.py", text)) == [
        ("/model/seq_len", 49152, 5, 5),
        ("/training/max_steps", 1770, 6, 5),
        ("/eval/every_steps", 125.0, 7, 5),
        ("/model/vocab", 50257, 8, 5),
    ]


def test_broken_training_file_is_a_located_error() -> None:
    doc = read("broken_training.py")
    assert isinstance(doc, Document) and [(e.line, e.column) for e in doc.errors] == [(3, 15)]
    assert doc.errors[0].message.startswith("invalid Python")


@pytest.mark.parametrize(
    "text",
    [
        "def broken(:\n    pass\n",  # a scratch file: not ours to judge
        "batch_size = (\n",  # one generic name is no training config
        "a\x00b = 1\n",
    ],
)
def test_broken_unrecognisable_python_is_not_claimed(text: str) -> None:
    assert isinstance(read_document(Input("scratch.py", text)), Skipped)


def test_other_python_and_other_suffixes_are_not_claimed() -> None:
    assert isinstance(read("plain_module.py"), Skipped)
    text = (FIXTURES / "nanogpt_config.py").read_text()
    assert python_code.recognise(Input("nanogpt_config.txt", text)) == 0.0
    assert python_code.recognise(Input("train.yaml", "batch_size: 4\nblock_size: 8\n")) == 0.0


def test_nothing_in_the_file_is_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = (FIXTURES / "pwned.py").read_text().replace("/tmp/trainlint_pwned", str(marker))
    assert str(marker) in text
    doc = read("pwned.py", text)
    assert facts(doc) == [
        ("/training/micro_batch_size", 4, 4, 1),
        ("/model/seq_len", 128, 5, 1),
    ]  # max_iters = eval(...) is unknown
    assert not marker.exists()


def test_columns_count_characters_not_bytes() -> None:
    text = 'block_size = 8\nn_embd = 64\nnote = "héllo"; n_layer = 4\n'
    assert ("/model/layers", 4, 3, 17) in facts(read("cfg.py", text))


def test_lightning_trainer_told_apart_from_hf_trainer() -> None:
    text = (
        "from pytorch_lightning import Trainer\n"
        "from pytorch_lightning.profilers import PyTorchProfiler\n"
        "trainer = Trainer(devices=[0, 1], precision=16, max_epochs=3, detect_anomaly=True,\n"
        "                  profiler=PyTorchProfiler(), strategy='deepspeed_stage_3_offload')\n"
    )
    assert facts(read("fit.py", text)) == [
        ("/resources/gpus_per_node", 2, 3, 19),
        ("/training/precision", "fp16", 3, 35),
        ("/training/epochs", 3.0, 3, 49),
        ("/logging/anomaly_detection", True, 3, 63),
        ("/logging/profiler/enabled", True, 4, 28),
        ("/logging/profiler/scheduled", True, 4, 28),  # Lightning's default schedule
        ("/training/parallelism/offload_optimizer", True, 4, 47),
        ("/training/parallelism/offload_params", True, 4, 47),
        ("/training/parallelism/strategy", "deepspeed", 4, 47),
        ("/training/parallelism/zero_stage", 3, 4, 47),
    ]
    hf = "from transformers import Trainer\ntrainer = Trainer(model=m, args=args)\n"
    hf_doc = read("hf.py", hf)
    assert facts(hf_doc) == [] and isinstance(hf_doc, Document) and hf_doc.confidence == 0.9
    custom = "from mylib import Trainer\nTrainer(devices=8)\n"
    assert isinstance(read("custom.py", custom), Skipped)


def test_deepspeed_dict_by_keyword_and_unrelated_dicts() -> None:
    text = (
        "from transformers import TrainingArguments\n"
        "zero = {'zero_optimization': {'stage': 2}, 'steps_per_print': 50}\n"
        "hparams = {'train_batch_size': 64, 'gradient_accumulation_steps': 2}\n"
        "args = TrainingArguments(output_dir='o', deepspeed=zero, save_steps=0.25)\n"
    )
    assert facts(read("run.py", text)) == [
        ("/training/parallelism/strategy", "deepspeed", 2, 1),
        ("/training/parallelism/zero_stage", 2, 2, 31),
        ("/logging/every_steps", 50, 2, 44),
        ("/checkpoint/every_steps", 0.25, 4, 58),  # a fraction of the run, as HF reads it
    ]


def test_feature_switches() -> None:
    text = (
        "import os\nimport torch\nfrom transformers import Trainer\n"
        "os.environ.setdefault('NCCL_DEBUG', 'WARN')\n"
        "os.environ.update({'TORCH_NCCL_ASYNC_ERROR_HANDLING': '1'}, OMP_NUM_THREADS='8')\n"
        "os.environ['X'] = some_value\n"
        "with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, active=2)):\n"
        "    Trainer(model=m, args=a).train()\n"
        "if debug:\n    torch.autograd.set_detect_anomaly(True)\n"
    )
    assert facts(read("train.py", text)) == [
        ("/env/NCCL_DEBUG", "WARN", 4, 23),
        ("/env/TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 5, 20),
        ("/env/OMP_NUM_THREADS", "8", 5, 61),
        ("/logging/profiler/enabled", True, 7, 6),
        ("/logging/profiler/scheduled", True, 7, 6),
    ]


def test_launch_script_references_a_positional_python_config() -> None:
    text = (
        "#!/bin/bash\n"
        "torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py\n"
        "python3 deepy.py train.py configs/125M.yml\n"
    )
    doc = read_document(Input("run.sh", text))
    assert isinstance(doc, Document) and doc.format == "launch-script"
    assert [(r.path, r.role, r.location.line) for r in doc.references] == [
        ("config/train_gpt2.py", "config", 2)
    ]


def test_job_from_launch_script_and_python_config(in_tmp: Path) -> None:
    (in_tmp / "config").mkdir()
    (in_tmp / "config" / "train_gpt2.py").write_text((FIXTURES / "nanogpt_config.py").read_text())
    (in_tmp / "train.py").write_text("import torch\n\nprint('training')\n")
    (in_tmp / "run.sh").write_text(
        "#!/bin/bash\ntorchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py\n"
    )
    jobs = assemble([Path("run.sh"), Path("config/train_gpt2.py"), Path("train.py")])
    assert [job.id for job in jobs] == ["run.sh"]
    job = jobs[0]
    assert job.resources.gpus_per_node == 8 and job.training.micro_batch_size == 12
    assert job.training.global_batch_size == 480 and job.model.seq_len == 1024
    assert job.provenance["/model/seq_len"].file == "config/train_gpt2.py"


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("5 * 8", 40), ("2**10", 1024), ("-1", -1), ("600_000", 600000), ("3e-4", 3e-4),
        ("7 // 2", 3), ("1 / 4", 0.25), ("[1, 'a', None]", [1, "a", None]),
        ("{'a': {'b': 1}}", {"a": {"b": 1}}), ("True", True),
        ("10**10**10", UNKNOWN), ("'a' * 10**9", UNKNOWN), ("1 / 0", UNKNOWN),
        ("True + 1", UNKNOWN), ("x", UNKNOWN), ("f(1)", UNKNOWN), ("f'{x}'", UNKNOWN),
        ("1e308 * 10", UNKNOWN), ("(-8) ** 0.5", UNKNOWN), ("10**40", UNKNOWN),
        ("{**other}", UNKNOWN), ("b'x'", UNKNOWN), ("1j", UNKNOWN),
    ],
)  # fmt: skip
def test_literal_evaluator(source: str, value: object) -> None:
    node = ast.parse(source, mode="eval").body
    assert literal(node) == value if value is not UNKNOWN else literal(node) is UNKNOWN


def test_positions_count_newline_styles_like_python() -> None:
    text = "a = 1\rb = 2\r\nc = 3\n"
    positions = Positions(text)
    assert [positions.of(stmt) for stmt in ast.parse(text).body] == [(1, 1), (2, 1), (3, 1)]


@pytest.mark.parametrize(
    "text",
    [
        "batch_size = 1\nblock_size = " + "(" * 300 + "\n",
        "n_layer = 1\nblock_size = " + "+".join(["1"] * 100_000) + "\n",
        "n_layer = 1\nblock_size = 1\n" + "x = 1\n" * (MAX_BYTES // 6 + 1),
    ],
)
def test_hostile_training_files_are_source_errors(text: str) -> None:
    with pytest.raises(SourceError):
        python_code.recognise(Input("train.py", text))


def test_keys_are_documented() -> None:
    described = python_code.keys()
    assert described["batch_size"] == ["/training/micro_batch_size"]
    assert described["ModelCheckpoint(save_top_k=)"] == ["/checkpoint/keep_last"]


def _check(text: str) -> None:
    file = Input("train.py", text)
    try:
        if python_code.recognise(file) > 0:
            doc = python_code.parse(file)
            assert all(f.location.line >= 1 and f.location.column >= 1 for f in doc.facts)
    except SourceError:
        pass


_WORDS = st.sampled_from([
    "batch_size", "block_size", "n_layer", "TrainingArguments", "L.Trainer", "ModelCheckpoint",
    "ds_config", "save_steps", "=", "(", ")", "[", "]", "{", "}", ":", ",", "**", "*", "-", "'",
    '"', "\n", " ", "    ", "@dataclass", "class", "def", "if", "1", "2.5", "1e9", "True", "é",
    "\\", "#", "\r", "\t", "\x00", "'zero_optimization'", "os.environ", "torch.compile",
])  # fmt: skip


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_WORDS, max_size=60).map("".join))
def test_random_python_ish_text_only_raises_source_error(text: str) -> None:
    _check(text)


@settings(max_examples=examples(100), deadline=None)
@given(st.text(max_size=300))
def test_random_text_only_raises_source_error(text: str) -> None:
    _check("batch_size = 1\nblock_size = 2\n" + text)


_NAMES = st.sampled_from(["batch_size", "block_size", "n_layer", "eval_interval", "dtype", "x"])
_KWARGS = st.sampled_from([
    "devices", "precision", "max_time", "save_steps", "deepspeed", "every_n_train_steps",
    "strategy", "profiler", "report_to", "save_top_k", "config",
])  # fmt: skip
_VALUES = st.recursive(
    st.one_of(
        st.integers(-(10**40), 10**40).map(str), st.floats(allow_nan=False).map(repr),
        st.sampled_from(["'bf16'", "'auto'", "None", "True", "name", "f(x)", "'16-mixed'"]),
    ),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(_KWARGS, inner), max_size=3).map(
            lambda pairs: "{" + ", ".join(f"'{k}': {v}" for k, v in pairs) + "}"
        ),
    ),
    max_leaves=8,
)  # fmt: skip
_CALLEES = st.sampled_from([
    "TrainingArguments", "L.Trainer", "ModelCheckpoint", "DeepSpeedStrategy",
    "deepspeed.initialize", "torch.profiler.profile", "os.environ.update", "SFTConfig",
])  # fmt: skip
_STATEMENTS = st.one_of(
    st.tuples(_NAMES, _VALUES).map(lambda t: f"{t[0]} = {t[1]}"),
    st.tuples(_CALLEES, st.lists(st.tuples(_KWARGS, _VALUES), max_size=4)).map(
        lambda t: f"{t[0]}(" + ", ".join(f"{k}={v}" for k, v in t[1]) + ")"
    ),
    st.tuples(_NAMES, _VALUES).map(lambda t: f"@dataclass\nclass C:\n    {t[0]}: int = {t[1]}"),
    st.tuples(_VALUES, _VALUES).map(lambda t: f"os.environ[{t[0]}] = {t[1]}"),
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STATEMENTS, min_size=1, max_size=8).map("\n".join))
def test_random_valid_python_never_raises(text: str) -> None:
    ast.parse(text)  # the grammar only makes valid Python
    file = Input("train.py", text)
    if python_code.recognise(file) > 0:
        doc = python_code.parse(file)
        assert all(f.location.line >= 1 and f.location.column >= 1 for f in doc.facts)


def test_dataclass_field_default_is_read() -> None:
    text = (
        "from dataclasses import dataclass, field\n\n@dataclass\nclass TrainConfig:\n"
        "    max_steps: int = field(default=2000)\n    save_every: int = 100\n"
        "    tags: list = field(default_factory=list)\n"
    )
    doc = read_document(Input("config.py", text))
    assert isinstance(doc, Document)
    assert {f.pointer: f.value for f in doc.facts}.get("/training/max_steps") == 2000


LIBRARY_CONFIG = (
    "from dataclasses import dataclass, field\n"
    "from transformers import TrainingArguments\n\n"
    "@dataclass\nclass GRPOConfig(TrainingArguments):\n"
    "    logging_steps: float = field(default=10)\n"
    "    per_device_train_batch_size: int = field(default=8)\n"
    "    max_steps: int = 1000\n"
)


@pytest.mark.parametrize(
    ("name", "text", "purpose"),
    [
        ("tests/test_sft_trainer.py",
         "from trl import SFTConfig\n\ndef test_train():\n"
         "    SFTConfig(max_steps=3, per_device_train_batch_size=2, logging_steps=1)\n",
         "tests (a pytest module), not a training run"),
        ("trl/trainer/grpo_config.py", LIBRARY_CONFIG,
         "extends argument classes and runs nothing (library code), not a training run"),
        # a project's own defaults, and a library class a script then uses, are runs
        ("dataclass_config.py", None, None),
        ("sft.py", LIBRARY_CONFIG + "\nif __name__ == '__main__':\n    main()\n", None),
        ("sft.py", LIBRARY_CONFIG + "\nargs = GRPOConfig(output_dir='out', max_steps=5)\n", None),
    ],
)  # fmt: skip
def test_tests_and_library_argument_classes_are_no_runs(
    name: str, text: str | None, purpose: str | None
) -> None:
    doc = read(name, text)
    assert isinstance(doc, Document) and doc.facts  # still read: a job that references it uses them
    assert doc.purpose == purpose


def test_a_library_argument_class_roots_no_job(in_tmp: Path) -> None:
    (in_tmp / "grpo_config.py").write_text(LIBRARY_CONFIG)
    (in_tmp / "test_grpo.py").write_text(
        "from trl import GRPOConfig\n\ndef test_x():\n"
        "    GRPOConfig(max_steps=3, logging_steps=1)\n"
    )
    assert assemble([in_tmp / "grpo_config.py", in_tmp / "test_grpo.py"]) == []


@pytest.mark.parametrize("name", ["bench.py", "benchmark_gpt.py", "tools/bench_mfu.py"])
def test_a_benchmark_script_of_training_globals_is_no_training_run(name: str) -> None:
    """nanoGPT's bench.py sets batch_size, block_size, ... and times a few steps."""
    doc = read(name, "batch_size = 12\nblock_size = 1024\nn_layer = 12\nmax_iters = 10\n")
    assert isinstance(doc, Document) and doc.purpose is not None and "benchmark" in doc.purpose
    other = read("train_bench.py", "batch_size = 12\nblock_size = 1024\nn_layer = 12\n")
    assert isinstance(other, Document) and other.purpose is None
