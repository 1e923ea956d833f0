"""Megatron-LM flags: the table, and a launch script whose flags come from bash arrays
(``GPT_MODEL_ARGS=(--num-layers 96 ...)``) landing with the place they were written."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from trainlint.job import Job, Location
from trainlint.lint import load_jobs
from trainlint.sources import launch_script, megatron, read_document
from trainlint.sources.base import Document, Input

SCRIPT = Path(__file__).parent / "fixtures" / "megatron" / "pretrain_gpt3.sh"
HERE = Location(file="run.sh", line=3, column=5)


def test_array_flags_land_with_their_positions() -> None:
    doc = read_document(Input(str(SCRIPT), SCRIPT.read_text()))
    assert isinstance(doc, Document) and doc.format == "launch-script"
    rows = [
        (f.pointer, f.value, f.location.line, f.location.column)
        for f in doc.facts
        if not f.pointer.startswith("/launcher/")
    ]
    assert rows == [
        ("/resources/gpus_per_node", 8, 8, 5),
        ("/resources/nodes", 16, 9, 5),
        ("/model/layers", 96, 13, 5),
        ("/model/hidden", 12288, 14, 5),
        ("/model/heads", 96, 15, 5),
        ("/model/seq_len", 2048, 16, 5),
        ("/training/micro_batch_size", 1, 20, 5),
        ("/training/global_batch_size", 1536, 21, 5),
        ("/training/max_steps", 500000, 22, 5),
        ("/training/precision", "bf16", 23, 5),  # --bf16, read by the HF table
        ("/training/precision", "fp8", 24, 5),  # --fp8-format hybrid, later: wins
        ("/features/fp8", "precision", 24, 5),
        ("/training/parallelism/zero_stage", 1, 25, 5),
        ("/training/activation_checkpointing", True, 26, 5),
        ("/training/recompute", "selective", 26, 5),  # --recompute-activations
        ("/resources/time_limit_s", 14100.0, 27, 5),
        ("/training/parallelism/tensor", 8, 31, 5),
        ("/training/parallelism/pipeline", 16, 32, 5),
        ("/logging/every_steps", 100, 36, 5),
        ("/checkpoint/every_steps", 10000, 37, 5),
        ("/eval/every_steps", 1000, 38, 5),
        ("/logging/reporters", ["tensorboard"], 40, 5),
    ]  # --save and --some-unknown-flag give nothing


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        (
            "--train-samples",
            "1953125000",
            [("/training/dataset_samples", 1953125000), ("/training/epochs", 1.0)],
        ),
        ("--ffn-hidden-size", "14336", [("/model/ffn_hidden", 14336)]),
        ("--num-query-groups", "8", [("/model/kv_heads", 8)]),
        ("--num_workers", "6", [("/data/num_workers", 6)]),  # underscores spell the same flag
        (
            "--recompute-activations",  # Megatron makes it --recompute-granularity selective
            True,
            [("/training/activation_checkpointing", True), ("/training/recompute", "selective")],
        ),
        (
            "--recompute-granularity",
            "selective",
            [("/training/activation_checkpointing", True), ("/training/recompute", "selective")],
        ),
        (
            "--recompute-granularity",
            "full",
            [("/training/activation_checkpointing", True), ("/training/recompute", "full")],
        ),
        ("--recompute-granularity", "$GRAN", []),
        ("--sequence-parallel", True, [("/training/parallelism/sequence_parallel", True)]),
        ("--context-parallel-size", "2", [("/training/parallelism/context", 2)]),
        ("--expert-model-parallel-size", "8", [("/training/parallelism/expert", 8)]),
        ("--fp8", "hybrid", [("/training/precision", "fp8"), ("/features/fp8", "precision")]),
        ("--fp8-e4m3", True, [("/training/precision", "fp8"), ("/features/fp8", "precision")]),
        ("--vocab-size", "128256", [("/model/vocab", 128256)]),
        ("--tokenizer-type", "GPT2BPETokenizer", [("/model/vocab", 50257)]),
        ("--tokenizer-type", "HuggingFaceTokenizer", []),  # the vocabulary is in its files
        ("--tokenizer-model", "meta-llama/Meta-Llama-3-8B", [("/model/vocab", 128256)]),
        ("--tokenizer-model", "/data/tokenizer.model", []),
        ("--use-torch-fsdp2", True, [("/training/parallelism/strategy", "fsdp")]),
        ("--no-save-optim", True, [("/checkpoint/save_optimizer", False)]),
        ("--wandb-project", "gpt3", [("/logging/reporters", ["wandb"])]),
        ("--exit-duration-in-mins", "$MINUTES", []),
        ("--eval-iters", "100", [("/eval/iters", 100)]),
        (
            "--log-num-zeros-in-grad",
            True,
            [("/logging/per_step_diagnostics/num_zeros_in_grad", True)],
        ),
        ("--log-params-norm", True, [("/logging/per_step_diagnostics/params_norm", True)]),
        ("--global-batch-size", "$((WORLD_SIZE*8))", []),
        ("--lr", "6e-5", []),
        ("--not-a-megatron-flag", "1", []),
    ],
)
def test_cli_facts(flag: str, value: Any, expected: list[tuple[str, Any]]) -> None:
    facts = megatron.cli_facts(flag, value, HERE)
    assert [(f.pointer, f.value) for f in facts] == expected
    assert all(f.location == HERE for f in facts)


def test_optimizer_flag_is_normalised() -> None:
    facts = megatron.cli_facts("--optimizer", "adam", HERE)
    assert {f.pointer: f.value for f in facts} == {
        "/training/optimizer/name": "adam",
        "/training/optimizer/family": "adamw",
        "/training/optimizer/eight_bit": False,
        "/training/optimizer/experimental": False,
    }


def test_hf_flags_keep_their_hf_meaning() -> None:
    """A flag both tables know is read once, by the HF table (``--seed``, ``--fp16``)."""
    facts, _ = launch_script.program_facts([], "run.sh")
    assert facts == []
    text = "#!/bin/bash\npython train.py --seed 7 --fp16 --save_steps 5 --micro-batch-size 2\n"
    doc = read_document(Input("run.sh", text))
    assert isinstance(doc, Document)
    found = [(f.pointer, f.value) for f in doc.facts if not f.pointer.startswith("/launcher/")]
    assert found == [
        ("/training/seed", 7),
        ("/training/precision", "fp16"),
        ("/checkpoint/every_steps", 5.0),
        ("/training/micro_batch_size", 2),
    ]


def test_keys_document_every_flag() -> None:
    described = megatron.keys()
    assert described["--save-interval"] == ["/checkpoint/every_steps"]
    assert len(described) == len(megatron.FLAGS)


# Megatron-LM's Llama 3 8B FP8 example (tests/fresh/MANIFEST.tsv): the run is --train-samples.
FRESH = Path(__file__).parents[1] / "fresh" / "repos" / "Megatron-LM" / "examples"
LLAMA3_FP8 = FRESH / "llama" / "train_llama3_8b_h100_fp8.sh"


def _job(tmp_path: Path, script: Path | str) -> Job:
    target = tmp_path / "train.sh"
    target.write_text(script.read_text() if isinstance(script, Path) else script)
    (job,) = load_jobs([tmp_path])
    return job


def test_train_samples_over_the_global_batch_are_the_run_steps(tmp_path: Path) -> None:
    job = _job(tmp_path, LLAMA3_FP8)
    assert job.estimates.run.steps == math.ceil(1953125000 / 128)


GPT2_SELECTIVE = """#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 \\
    --micro-batch-size 4 --global-batch-size 256 --train-iters 1000 --bf16 \\
    --tensor-model-parallel-size 2 --sequence-parallel --recompute-activations \\
    --tokenizer-type GPT2BPETokenizer --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt
"""


def test_recompute_activations_is_selective_and_the_tokenizer_gives_the_vocabulary(
    tmp_path: Path,
) -> None:
    """Selective recompute (the estimator adds no second forward for it, and uses Korthikanti's
    selective activations), sequence parallelism read, and GPT-2's tokenizer making the
    parameter count known from the dimensions."""
    job = _job(tmp_path, GPT2_SELECTIVE)
    assert (job.training.recompute, job.training.parallelism.sequence_parallel) == (
        "selective",
        True,
    )
    assert job.model.vocab == 50257
    assert job.estimates.params is not None
    assert job.estimates.sources["params"] == "estimated"


def test_gpt_oss_example_is_selective_sequence_parallel_fp8(tmp_path: Path) -> None:
    """Megatron-LM's examples/gptoss/02_train.sh: --recompute-activations (selective),
    --sequence-parallel and --fp8-format hybrid over --bf16."""
    job = _job(tmp_path, FRESH / "gptoss" / "02_train.sh")
    training = job.training
    assert (training.recompute, training.precision) == ("selective", "fp8")
    assert training.parallelism.sequence_parallel is True


DIAGNOSTICS_UNDER_SLURM = """#!/bin/bash
#SBATCH --gres=gpu:h100:8
#SBATCH --time=500:00:00
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 \\
    --micro-batch-size 4 --global-batch-size 256 --train-iters 500 --bf16 \\
    --eval-interval 50 --eval-iters 100 --log-num-zeros-in-grad --log-params-norm \\
    --exit-duration-in-mins 60
"""


def test_eval_iters_and_per_step_diagnostics_reach_the_job(tmp_path: Path) -> None:
    """--eval-iters (batches per evaluation) beside --eval-interval, and each per-step
    diagnostic as its own entry, so TL306 points at the flag that turned it on."""
    job = _job(tmp_path, DIAGNOSTICS_UNDER_SLURM)
    assert (job.eval.every_steps, job.eval.iters) == (50, 100)
    assert job.logging.per_step_diagnostics == {"num_zeros_in_grad": True, "params_norm": True}


def test_the_schedulers_time_limit_outranks_exit_duration(tmp_path: Path) -> None:
    """#SBATCH --time is what ends the allocation; --exit-duration-in-mins is read as the job's
    limit only where no scheduler states one."""
    job = _job(tmp_path, DIAGNOSTICS_UNDER_SLURM)
    assert job.resources.time_limit_s == 500 * 3600
    alone = _job(tmp_path, DIAGNOSTICS_UNDER_SLURM.replace("#SBATCH --time=500:00:00\n", ""))
    assert alone.resources.time_limit_s == 60 * 60


def test_megatron_eval_flags_get_no_hugging_face_eval_default() -> None:
    """HF's "``--eval_steps`` without ``--eval_strategy`` does not evaluate" followed
    Megatron's ``--eval-interval`` too, and turned TL305 off on every Megatron job."""
    text = "torchrun --nproc_per_node 8 pretrain_gpt.py --train-iters 100 --eval-interval 10\n"
    doc = read_document(Input("pretrain.sh", text))
    assert isinstance(doc, Document)
    assert {f.pointer: f.value for f in doc.facts}["/eval/every_steps"] == 10
    assert "/eval/strategy" not in {d.pointer for d in doc.defaults}
    hf = "torchrun --nproc_per_node 8 train.py --max_steps 100 --eval_steps 10\n"
    hf_doc = read_document(Input("train.sh", hf))
    assert isinstance(hf_doc, Document)
    assert "/eval/strategy" in {d.pointer for d in hf_doc.defaults}
