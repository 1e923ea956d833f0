"""What a file no format reads is: a GPU workload of another tool, a template, data, or ours.

Every candidate file gets an honest outcome (issue 14): part of a job, or skipped with a reason,
or — when it looks like a GPU training workload that trainlint does not read — an
``UnsupportedWorkload`` that TL907 (unsupported-workload) reports at the line that made it look
like one. Nothing here judges a file trainlint reads; the formats do that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trainlint.errors import SourceError
from trainlint.job import Location
from trainlint.sources.base import Input, Skipped, UnsupportedWorkload
from trainlint.sources.base.purpose import purpose
from trainlint.sources.structured import Tree

# GPU resource names of Kubernetes device plugins (NVIDIA, AMD, Intel, Habana, AWS Neuron).
_GPU_RESOURCE = re.compile(
    r"^[ \t\"'-]*(?:nvidia\.com/(?:gpu|mig-[\w.]+)|amd\.com/gpu|gpu\.intel\.com/[\w]+"
    r"|habana\.ai/gaudi|aws\.amazon\.com/neuron(?:core)?)[\"']?\s*:\s*[\"']?(?P<count>[^\s\"'#]+)",
    re.MULTILINE,
)


def classify(file: Input) -> Skipped:
    """The outcome of a file no format claims: a workload (TL907) or a plain skip. A base
    that other configs inherit (OpenMMLab's ``_base_/``, detectron2's ``Base-*.yaml``) is a
    piece of those configs, never a workload of its own."""
    if _BASE.search(file.path):
        return Skipped(file.path, "a base config other configs inherit (not a run of its own)")
    for detector in _DETECTORS:
        found = detector(file)
        if found is not None:
            return found
    return Skipped(file.path, _plain_reason(file))


_BASE = re.compile(r"(?:^|/)_base_/|(?:^|/)Base-[^/]*\.ya?ml$")


def _plain_reason(file: Input) -> str:
    kinds = {"yaml": "YAML", "yml": "YAML", "json": "JSON", "toml": "TOML", "py": "Python"}
    what = kinds.get(file.suffix, "file")
    return f"{what} with no training settings trainlint reads"


# Templates ---------------------------------------------------------------------------------

_GO_TEMPLATE = re.compile(
    r"\{\{-|-\}\}|\{\{\s*(?:\.[A-Za-z]|\$|include\s|template\s|toYaml|tpl\s|if\s|else\b|end\b"
    r"|range\s|with\s|define\s|default\s|required\s|quote\s)"
)
# Helm's own objects and functions: never a value of a valid config (a chat template's Jinja
# ``{{- message }}`` is).
_HELM_ACTION = re.compile(
    r"\{\{-?\s*(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|include\s+\""
    r"|toYaml\b|template\s+\")"
)
_JINJA_STATEMENT = re.compile(r"\{%-?\s*(?:if|for|set|macro|include|extends|block|raw|import)\b")
_COOKIECUTTER = re.compile(r"\{\{\s*cookiecutter\.")
_NAMED_TEMPLATE = re.compile(r"(?i)template[^/]*$")  # ds_config_TEMPLATE.json, sed fills it
_ANY_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")


def template_kind(file: Input, parses: bool) -> str | None:
    """``Helm (Go) template``, ``Jinja template`` or ``cookiecutter template`` for a file that
    is not the YAML/JSON/TOML it becomes once rendered. Go template actions (``{{ .Values.x
    }}``, ``{{- if }}``) mark one even when the text happens to parse; other placeholders, or
    a name saying so (``ds_config_TEMPLATE.json``), only in a file that does not parse (an
    Ansible playbook's ``"{{ item }}"``, a chat template, Argo's ``{{inputs.parameters.x}}``
    are string values of a valid file)."""
    if not file.is_structured and file.suffix != "toml":
        return None
    text = file.text
    if "{{" in text and _HELM_ACTION.search(text):
        return "Helm (Go) template"
    if parses:
        return None
    if _GO_TEMPLATE.search(text):
        return "Helm (Go) template"
    if _COOKIECUTTER.search(text):
        return "cookiecutter template"
    if _JINJA_STATEMENT.search(text):
        return "Jinja template"
    if _ANY_TEMPLATE.search(text):
        return "template ({{ }} placeholders)"
    if _NAMED_TEMPLATE.search(file.path):
        return "template (by its name; a script fills it in)"
    return None


def skipped_template(file: Input, kind: str) -> Skipped:
    """A template is read once rendered; one that requests GPUs for a run (not a service, not
    a file named for inference) is a workload not understood."""
    reason = f"{kind}: not {_language(file)} until rendered; check the rendered output"
    gpu = _gpu_line(file.text)
    written = _KIND_LINE.search(file.text)
    serves = written is not None and _NOT_TRAINING_KIND.search(written.group(1)) is not None
    if gpu is None or serves or purpose([file.path]) is not None:
        return Skipped(file.path, reason)
    line, evidence = gpu
    where = Location(file=file.path, line=line, column=_column(file.text, line))
    return Skipped(
        file.path, reason, UnsupportedWorkload(f"{kind} requesting GPUs", where, evidence)
    )


_KIND_LINE = re.compile(r"^kind:\s*[\"']?(\w+)", re.MULTILINE)


def _language(file: Input) -> str:
    return {"json": "JSON", "toml": "TOML"}.get(file.suffix, "YAML")


def _gpu_line(text: str) -> tuple[int, str] | None:
    match = _GPU_RESOURCE.search(text)
    if match is None:
        return None
    line = text.count("\n", 0, match.start()) + 1
    return line, " ".join(match.group(0).strip(" \t\"'-").split())


def _column(text: str, line: int) -> int:
    content = text.split("\n", line)[line - 1] if line else ""
    return len(content) - len(content.lstrip()) + 1


# trainlint's own output ---------------------------------------------------------------------


def own_output(file: Input) -> str | None:
    """trainlint's JSON report, SARIF log or baseline written into the checked tree."""
    head = file.text[:65536]
    if file.suffix not in ("json", "sarif") or not ('"findings"' in head or '"trainlint"' in head):
        return None
    try:
        data = json.loads(file.text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    keys = set(data)
    if {"version", "findings"} <= keys and keys <= {"version", "findings", "jobs", "errors"}:
        return "a trainlint report or baseline (its own output is never an input)"
    if _sarif_driver(data) == "trainlint":
        return "a trainlint SARIF log (its own output is never an input)"
    return None


def _sarif_driver(data: dict[str, Any]) -> str | None:
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs or not isinstance(runs[0], dict):
        return None
    tool = runs[0].get("tool")
    driver = tool.get("driver") if isinstance(tool, dict) else None
    name = driver.get("name") if isinstance(driver, dict) else None
    return str(name) if name else None


# Files that are not valid in their syntax --------------------------------------------------

# Keys only training configs write (HF Trainer, DeepSpeed, Axolotl, LLaMA-Factory, Lightning,
# Megatron/NeMo, GPT-NeoX, OLMo, torchtune, litgpt): a broken file showing one unmistakable key
# or two likely ones is a training config whose error is worth a TL901; any other broken file
# is someone else's.
_UNMISTAKABLE = (
    "per_device_train_batch_size", "gradient_accumulation_steps", "num_train_epochs",
    "save_total_limit", "train_micro_batch_size_per_gpu", "train_batch_size",
    "zero_optimization", "train-micro-batch-size-per-gpu", "accumulate_grad_batches",
    "global_train_batch_size", "device_train_microbatch_size", "tensor_model_parallel_size",
    "pipeline_model_parallel_size", "lr_scheduler_type", "gradient_checkpointing",
)  # fmt: skip
_LIKELY = (
    "save_steps", "logging_steps", "eval_steps", "save_strategy", "max_steps",
    "micro_batch_size", "global_batch_size", "train_iters", "train-iters", "max_epochs",
    "base_model", "sequence_len", "finetuning_type", "cutoff_len", "max_duration",
    "save_interval", "log_interval", "learning_rate", "warmup_steps", "warmup_ratio",
    "activation_checkpointing", "batch_size", "epochs",
)  # fmt: skip
_KEY_LINE = re.compile(
    r"^[ \t]*[\"']?("
    + "|".join(re.escape(k) for k in (*_UNMISTAKABLE, *_LIKELY))
    + r")[\"']?[ \t]*[:=]",
    re.MULTILINE,
)


# torchtitan's TOML sections (``[training``, unclosed, still names one).
_TOML_SECTION = re.compile(
    r"^[ \t]*\[[ \t]*(job|model|training|parallelism|checkpoint|optimizer|lr_scheduler|metrics"
    r"|activation_checkpoint|float8|compile|experimental)\b",
    re.MULTILINE,
)


def looks_like_training(file: Input) -> bool:
    """One unmistakable or two likely training keys at the start of a line, or two sections of
    a training TOML (read from text: the file does not parse, so its structure is unknown)."""
    found = {m.group(1) for m in _KEY_LINE.finditer(file.text)}
    if found.intersection(_UNMISTAKABLE) or len(found) >= 2:
        return True
    return file.suffix == "toml" and len(set(_TOML_SECTION.findall(file.text))) >= 2


# GPU workloads of tools trainlint does not read (yet) ---------------------------------------

Detector = Callable[[Input], "Skipped | None"]


def _trees(file: Input) -> list[Tree]:
    if not file.is_structured:
        return []
    try:
        return file.trees
    except SourceError:  # a broken file is handled before classify
        return []


def _span(file: Input, tree: Tree, path: tuple[str | int, ...]) -> Location:
    line, column = tree.span(path)
    return Location(file=file.path, line=line, column=column)


def _kubernetes(file: Input) -> Skipped | None:
    """A Kubernetes object the kubernetes format does not read (RayCluster, Notebook...): a
    workload when it requests GPUs, else a plain skip naming its kind. In a file of several
    documents the one that requests GPUs is named (not the file's first, a ResourceFlavor
    before the Deployment that asks for the GPUs); a service (Deployment, InferenceService)
    is no training run, so it is a workload only where another document trains."""
    objects = [
        (tree, _named(tree.data))
        for tree in _trees(file)
        if isinstance(tree.data, dict) and "kind" in tree.data and "apiVersion" in tree.data
    ]
    if not objects:
        return None
    requests = [(named, found) for tree, named in objects
                if (found := _tree_gpu_request(file, tree, named)) is not None]  # fmt: skip
    if not requests:
        return Skipped(file.path, f"{objects[0][1]}: requests no GPUs")
    training = [(named, found) for named, found in requests if not _serves(named)]
    if not training:
        return Skipped(file.path, f"{requests[0][0]}: a service, not a training run")
    named, workload = training[0]
    return Skipped(file.path, f"{named}: not a kind trainlint reads", workload)


def _named(data: dict[str, Any]) -> str:
    kind, api = str(data["kind"]), str(data.get("apiVersion", ""))
    return f"Kubernetes {kind} ({api})" if api else f"Kubernetes {kind}"


def _serves(named: str) -> bool:
    return bool(_NOT_TRAINING_KIND.search(named.split(" ")[1]))


@dataclass(frozen=True)
class _Signature:
    """A training config of another tool: its name, the keys that mark it, the key to point at."""

    kind: str
    test: Callable[[dict[str, Any]], bool]
    at: tuple[str, ...]
    format: str | None = None  # the format that reads this tool's configs, when one does


def _has(data: dict[str, Any], *keys: str) -> bool:
    return all(key in data for key in keys)


def _block(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


_SIGNATURES = (
    _Signature(
        # detectron2's, or SlowFast's, fast-reid's... (the same yacs layout)
        "yacs config (detectron2-style SOLVER section)",
        lambda d: "SOLVER" in d or ("_BASE_" in d and ("MODEL" in d or "INPUT" in d)),
        ("SOLVER", "IMS_PER_BATCH"),
        "detectron2",
    ),
    _Signature(
        "DINOv2 / SSL training config",
        lambda d: (
            "batch_size_per_gpu" in _block(d, "train")
            and bool({"student", "teacher", "dino", "ibot"} & set(d))
        ),
        ("train", "batch_size_per_gpu"),
    ),
)


def _foreign_config(file: Input) -> Skipped | None:
    trees = _trees(file)
    data = trees[0].data if trees else None
    if not isinstance(data, dict):
        return None
    for signature in _SIGNATURES:
        if signature.test(data):
            where = _span(file, trees[0], signature.at)
            evidence = ".".join(signature.at)
            reason = f"{signature.kind}: {_unread(signature.format)}"
            return Skipped(file.path, reason, UnsupportedWorkload(signature.kind, where, evidence))
    return None


def _unread(format_name: str | None) -> str:
    """Why a known tool's config is not read: no format reads the tool, or its format did not
    recognise this file (detectron2, OpenMMLab and SpeechBrain have formats)."""
    if format_name is None:
        return "a format trainlint does not read yet"
    return f"not a config the {format_name} format recognises"


_HYPERPYYAML = re.compile(r"!(?:new|apply|name):|!ref\s")
_EPOCHS = re.compile(r"^(number_of_epochs|epochs|max_epochs|N_epochs)\s*:", re.MULTILINE)


def _hyperpyyaml(file: Input) -> Skipped | None:
    """SpeechBrain's HyperPyYAML hparams: a training config when it sets the epoch count."""
    if not file.is_structured or not _HYPERPYYAML.search(file.text):
        return None
    epochs = _EPOCHS.search(file.text)
    if epochs is None:
        return Skipped(file.path, "HyperPyYAML (SpeechBrain) with no training loop settings")
    line = file.text.count("\n", 0, epochs.start()) + 1
    kind = "SpeechBrain HyperPyYAML hparams"
    where = Location(file=file.path, line=line, column=1)
    reason = f"{kind}: {_unread('speechbrain')}"
    return Skipped(file.path, reason, UnsupportedWorkload(kind, where, epochs.group(1)))


_MMENGINE = re.compile(
    r"^(?:train_cfg|optim_wrapper|train_dataloader|runner_type)\s*=\s*dict\(", re.MULTILINE
)


def _mmengine(file: Input) -> Skipped | None:
    """An OpenMMLab (MMEngine) Python config: module-level ``train_cfg = dict(...)``."""
    if file.suffix != "py":
        return None
    match = _MMENGINE.search(file.text)
    if match is None:
        return None
    line = file.text.count("\n", 0, match.start()) + 1
    kind = "OpenMMLab (MMEngine) config"
    where = Location(file=file.path, line=line, column=1)
    reason = f"{kind}: {_unread('mmengine')}"
    return Skipped(
        file.path, reason, UnsupportedWorkload(kind, where, match.group(0).split("=")[0].strip())
    )


# Key names for how long a run trains and for its batch, in any tool's config (at any depth).
_RUN_LENGTH = frozenset({
    "max_epochs", "epochs", "num_epochs", "n_epochs", "number_of_epochs", "num_train_epochs",
    "max_steps", "max_iters", "max_iter", "train_iters", "train_steps", "total_steps",
    "max_duration", "num_iterations", "total_iters",
})  # fmt: skip
_BATCH = frozenset({
    "batch_size", "train_batch_size", "micro_batch_size", "global_batch_size",
    "per_device_train_batch_size", "batch_size_per_gpu", "ims_per_batch", "samples_per_gpu",
    "global_train_batch_size", "device_train_microbatch_size", "micro_batch_size_per_gpu",
})  # fmt: skip


def training_config(file: Input) -> UnsupportedWorkload | None:
    """A config of some training program that no format maps: it states how long the run
    trains and its batch, under keys trainlint reads for no format (``trainer_config:
    {max_epochs, batch_size}`` of a Hydra app)."""
    trees = _trees(file)
    if not trees or not isinstance(trees[0].data, dict):
        return None
    length = batch = None
    for path, _ in trees[0].items():
        key = str(path[-1]).lower() if path else ""
        length = length or (path if key in _RUN_LENGTH else None)
        batch = batch or (path if key in _BATCH else None)
        if length and batch:
            kind = "training config of a program trainlint does not read"
            evidence = ".".join(map(str, length))
            return UnsupportedWorkload(kind, _span(file, trees[0], length), evidence)
    return None


def _unmapped_config(file: Input) -> Skipped | None:
    workload = training_config(file)
    if workload is None:
        return None
    return Skipped(file.path, f"{workload.kind}", workload)


def gpu_request(file: Input, kind: str = "GPU resource request") -> UnsupportedWorkload | None:
    """A structured file that requests GPUs from a device plugin: a key ``nvidia.com/gpu``
    (not the same words inside a string, such as a test case's embedded manifest)."""
    for tree in _trees(file):
        found = _tree_gpu_request(file, tree, kind)
        if found is not None:
            return found
    return None


def _tree_gpu_request(file: Input, tree: Tree, kind: str) -> UnsupportedWorkload | None:
    """The first GPU request of one document."""
    for path, value in tree.items():
        if path and _GPU_KEY.fullmatch(str(path[-1])) and value not in (0, "0", None):
            evidence = f"{path[-1]}: {value}"
            return UnsupportedWorkload(kind, _span(file, tree, path), evidence)
    return None


_GPU_KEY = re.compile(
    r"nvidia\.com/(?:gpu|mig-[\w.]+)|amd\.com/gpu|gpu\.intel\.com/\w+|habana\.ai/gaudi"
    r"|aws\.amazon\.com/neuron(?:core)?"
)
# Kubernetes kinds that serve rather than train (a RayService, a KServe InferenceService).
_NOT_TRAINING_KIND = re.compile(r"Service|Deployment|StatefulSet|DaemonSet|ReplicaSet|Serving")


def _gpu_resource(file: Input) -> Skipped | None:
    """Any other structured file that requests GPUs."""
    workload = gpu_request(file)
    if workload is None:
        return None
    return Skipped(file.path, f"{workload.kind} in a file no format reads", workload)


_DETECTORS: tuple[Detector, ...] = (
    _kubernetes, _foreign_config, _hyperpyyaml, _mmengine, _gpu_resource, _unmapped_config,
)  # fmt: skip
