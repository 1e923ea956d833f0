"""What a launch or a file is for, read from its names: training, or something else.

A script that runs ``eval.py``, ``vllm serve`` or ``ray start`` and a config named
``eval_gpt2.py`` hold GPUs or settings too, but they are no training run: they root no job and
are never picked as a job's launch (issue 14). A training word wins over most others
(``train_net.py`` trains), but not over an evaluation-only flag (``--eval-only``) nor a word
for work on a trained model (``merge_lora_weights.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_TRAINING = frozenset({
    "train", "training", "trainer", "finetune", "finetuning", "fine", "pretrain", "pretraining",
    "sft", "dpo", "ppo", "grpo", "rlhf", "rloo", "orpo", "kto", "simpo", "reinforce", "fit",
    "distill", "distillation",
})  # fmt: skip
# Words that say what a program does to a trained model, whatever it was trained with
# (``merge_lora_weights.py``, ``convert_sft_checkpoint.py``).
_AFTER_TRAINING = frozenset({"merge", "convert", "export", "download"})

# Word of a name → what the program does instead of training.
_OTHER = {
    "eval": "evaluation", "evals": "evaluation", "evaluate": "evaluation",
    "evaluation": "evaluation", "test": "evaluation", "tests": "evaluation",
    "validate": "evaluation", "val": "evaluation", "lm_eval": "evaluation",
    "lighteval": "evaluation", "infer": "inference", "inference": "inference",
    "generate": "generation", "generation": "generation", "gen": "generation",
    "predict": "inference", "prediction": "inference", "sample": "sampling",
    "sampling": "sampling", "chat": "inference", "serve": "serving",
    "server": "serving", "serving": "serving", "vllm": "serving", "sglang": "serving",
    "tritonserver": "serving", "profile": "profiling", "profiling": "profiling",
    "download": "data preparation", "prepare": "data preparation",
    "preprocess": "data preparation", "tokenize": "data preparation",
    "convert": "checkpoint conversion", "export": "checkpoint conversion",
    "universal": "checkpoint conversion", "merge": "checkpoint conversion",
    "submit": "job submission", "start": "cluster setup", "stop": "cluster setup",
}  # fmt: skip

_EVAL_ONLY = re.compile(r"^--?(?:eval|test|inference|predict)[-_]only$|^--only[-_]eval$")
_WORD = re.compile(r"[A-Za-z]+")


def words(*names: str | None) -> list[str]:
    """The lower-case words of names: ``tools/run_text_generation_server.py`` → run, text,
    generation, server, py; ``lm_eval`` is kept whole as well."""
    found: list[str] = []
    for name in names:
        if not name:
            continue
        base = name.rsplit("/", 1)[-1].lower()
        found += [base.rsplit(".", 1)[0]] if "_" in base or "-" in base else []
        found += [w.lower() for w in _WORD.findall(name)]
    return found


def purpose(names: Iterable[str | None], flags: Iterable[str | None] = ()) -> str | None:
    """None for training (or when nothing says otherwise), else what the names say it is."""
    if any(flag and _EVAL_ONLY.match(flag) for flag in flags):
        return "evaluation"
    found = words(*names)
    after = next((word for word in found if word in _AFTER_TRAINING), None)
    if after is not None:
        return _OTHER[after]
    if trainish(*names):
        return None
    return next((what for word in found if (what := _other(word)) is not None), None)


def file_purpose(path: str) -> str | None:
    """What a file's name says it is for (``eval_gpt2.py``, ``run_inference.sh``); a file
    named for submitting or starting something submits or starts the training itself."""
    found = purpose([path])
    return None if found in ("job submission", "cluster setup") else found


def _other(word: str) -> str | None:
    """A word's purpose, by itself or by its stem (``evalharness``, ``inferencer``)."""
    if word in _OTHER:
        return _OTHER[word]
    return next((what for stem, what in _STEMS if word.startswith(stem)), None)


# Stems that say the purpose in longer words; short words (``test``, ``gen``) only whole.
_STEMS = (
    ("eval", "evaluation"), ("infer", "inference"), ("generat", "generation"),
    ("predict", "inference"), ("serving", "serving"), ("profil", "profiling"),
)  # fmt: skip


def trainish(*names: str | None) -> bool:
    """A name whose last part says training (``train.py``, ``openrlhf.cli.train_sft``,
    ``fairseq-train``); a package on the way does not (``verl.trainer.main_generation``)."""
    return any(word in _TRAINING for word in words(*(_last(name) for name in names)))


def _last(name: str | None) -> str | None:
    """``llava/train/train_mem.py`` → ``train_mem``; ``verl.trainer.main_ppo`` → ``main_ppo``."""
    if not name:
        return name
    base = name.rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".py", ".sh", ".yaml", ".yml", ".json", ".toml"):
        base = base.removesuffix(suffix)
    return base.rsplit(".", 1)[-1]
