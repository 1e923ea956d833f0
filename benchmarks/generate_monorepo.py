"""Generate a synthetic monorepo of training jobs for trainlint's scale benchmarks.

Run:  python benchmarks/generate_monorepo.py --files 1000 --out /tmp/mono-1000 [--seed 0]
      python benchmarks/generate_monorepo.py --files 100 --out /tmp/k8s-100 --only kubernetes

Writes about N files (exactly N unless the last job needs more) under DIR/jobs/<team>/<job>/,
one folder per training job, in the mix of formats seen in real repositories: SLURM scripts
launching torchrun with an HF Trainer YAML and a DeepSpeed JSON, bare torchrun scripts,
Kubeflow PyTorchJob and batch/v1 Job manifests, SkyPilot tasks, torchtitan TOML, nanoGPT
config modules, and the YAML/JSON shapes of the corpus (axolotl, torchtune, LLaMA-Factory,
litgpt, NeMo, gpt-neox, OLMo, Accelerate, DeepSpeed...). The corpus files (../shared/corpus,
see its PATTERNS.md and MANIFEST.tsv) are the templates: each copy keeps the file's shape and
size, lands at its original repository path inside the job folder, and has some of its small
integer values varied. Without the corpus only the built-in shapes are written. The output
depends only on --seed, --files, --only and the corpus.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"

GPUS = ["h100", "a100", "h200", "l40s", "a10g"]
SKY_GPUS = ["H100", "A100-80GB", "H200", "L40S", "A10G"]
K8S_PRODUCTS = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L40S"]
MODELS = [
    "meta-llama/Meta-Llama-3-8B",
    "meta-llama/Llama-3.1-70B",
    "Qwen/Qwen2.5-7B",
    "mistralai/Mistral-7B-v0.1",
    "openai-community/gpt2",
    "google/gemma-2-9b",
    "Qwen/Qwen2.5-0.5B",
    "microsoft/phi-2",
]
TEAMS = ["nlp", "vision", "speech", "rl", "infra", "search", "ads", "safety"]

# Small integers on a `key: value` / `key = value` / `"key": value` line, the values to vary.
_INT_LINE = re.compile(r'^(\s*"?[A-Za-z_][\w.-]*"?\s*[:=]\s*)(\d{1,6})(\s*,?\s*(?:#.*)?)$')

Files = dict[str, str]  # relative path in the job folder -> text


# ---------------------------------------------------------------------------- built-in shapes
def hf_yaml(r: random.Random, model: str) -> str:
    save = r.choice([10, 50, 200, 500, 1000, 2000])
    return f"""# Supervised fine-tuning of {model} (HF TrainingArguments, TRL SFTConfig keys).
model_name_or_path: {model}
max_seq_length: {r.choice([1024, 2048, 4096, 8192])}
bf16: {r.choice(["true", "false"])}
gradient_checkpointing: {r.choice(["true", "false"])}

per_device_train_batch_size: {r.choice([1, 2, 4, 8, 16])}
gradient_accumulation_steps: {r.choice([1, 2, 4, 8])}
max_steps: {r.choice([1000, 2000, 5000, 20000])}
learning_rate: 2.0e-5
lr_scheduler_type: cosine
warmup_ratio: 0.03

save_strategy: steps
save_steps: {save}
save_total_limit: {r.choice([1, 2, 3, 5])}
logging_steps: {r.choice([1, 10, 50])}
eval_strategy: steps
eval_steps: {save}
dataloader_num_workers: {r.choice([0, 2, 4, 8])}
report_to:
  - {r.choice(["wandb", "tensorboard", "none"])}
seed: {r.randint(0, 9999)}
output_dir: /checkpoints/{model.split("/")[-1].lower()}
"""


def ds_json(r: random.Random) -> str:
    stage = r.choice([1, 2, 3])
    config: dict[str, object] = {
        "fp16": {"enabled": "auto", "loss_scale": 0, "initial_scale_power": 16},
        "bf16": {"enabled": "auto"},
        "zero_optimization": {
            "stage": stage,
            "overlap_comm": True,
            "contiguous_gradients": True,
            "reduce_bucket_size": "auto",
        },
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "steps_per_print": r.choice([10, 100, 2000]),
        "wall_clock_breakdown": r.choice([True, False]),
    }
    if stage == 3:
        config["zero_optimization"] |= {  # type: ignore[operator]
            "offload_optimizer": {"device": r.choice(["none", "cpu"]), "pin_memory": True},
            "offload_param": {"device": r.choice(["none", "cpu"]), "pin_memory": True},
            "stage3_gather_16bit_weights_on_model_save": True,
        }
    return json.dumps(config, indent=4) + "\n"


def slurm(r: random.Random, name: str, config: str, ds: str) -> str:
    gpus = r.choice([1, 2, 4, 8])
    nodes = r.choice([1, 1, 2, 4])
    return f"""#!/bin/bash
#SBATCH --job-name={name}
#SBATCH --nodes={nodes}
#SBATCH --gres=gpu:{r.choice(GPUS)}:{gpus}
#SBATCH --time={r.choice(["04:00:00", "12:00:00", "24:00:00", "2-00:00:00"])}
#SBATCH --account={r.choice(TEAMS)}-research
#SBATCH --output=logs/%x-%j.out
set -euo pipefail

GPUS_PER_NODE=${{GPUS_PER_NODE:-{gpus}}}
export OMP_NUM_THREADS={r.choice([4, 8, 16])}
{r.choice(["export NCCL_DEBUG=INFO", "# export NCCL_DEBUG=INFO", ""])}

srun torchrun --nnodes={nodes} --nproc_per_node=$GPUS_PER_NODE \\
    --rdzv_backend=c10d --rdzv_endpoint=$(hostname):29500 train.py \\
    --config {config} \\
    --deepspeed {ds} \\
    --save_steps {r.choice([10, 100, 500, 1000])} \\
    --output_dir /checkpoints/{name}
"""


def torchrun_sh(r: random.Random, name: str, model: str) -> str:
    gpus = r.choice([1, 2, 4, 8])
    return f"""#!/usr/bin/env bash
# Fine-tune {model} for {name}.
set -euo pipefail
{r.choice(["export CUDA_LAUNCH_BLOCKING=1", "export TOKENIZERS_PARALLELISM=false", ""])}

torchrun --standalone --nproc-per-node {gpus} finetune.py \\
    --model_name_or_path {model} \\
    --per_device_train_batch_size {r.choice([1, 4, 8, 16])} \\
    --gradient_accumulation_steps {r.choice([1, 2, 8])} \\
    --max_steps {r.choice([2000, 20000, 100000])} \\
    --max_seq_length {r.choice([512, 1024, 2048])} \\
    --{r.choice(["bf16", "fp16", "tf32 True"])} \\
    --save_steps {r.choice([50, 1000, 5000])} \\
    --save_total_limit {r.choice([1, 2, 10])} \\
    --logging_steps {r.choice([1, 50, 100])} \\
    --dataloader_num_workers {r.choice([0, 4, 8])} \\
    --output_dir out/{name}
"""


def image(r: random.Random) -> str:
    return f"registry.example.com/{r.choice(TEAMS)}/trainer:{r.randint(1, 40)}.{r.randint(0, 9)}"


def pytorchjob(r: random.Random, name: str, model: str) -> str:
    gpus = r.choice([1, 2, 4, 8])
    workers = r.choice([1, 2, 3, 7])
    container = f"""          containers:
            - name: pytorch
              image: {image(r)}
              imagePullPolicy: IfNotPresent
              command:
                - torchrun
                - --nproc_per_node={gpus}
                - train.py
                - --model_name_or_path={model}
                - --save_steps={r.choice([100, 500, 2000])}
                - --bf16
              env:
                - name: NCCL_DEBUG
                  value: {r.choice(["INFO", "WARN"])}
              resources:
                limits:
                  nvidia.com/gpu: {gpus}
                  memory: {r.choice([64, 256, 512])}Gi
                requests:
                  cpu: "{r.choice([8, 16, 32])}"
              volumeMounts:
                - name: dshm
                  mountPath: /dev/shm
          nodeSelector:
            nvidia.com/gpu.product: {r.choice(K8S_PRODUCTS)}
          volumes:
            - name: dshm
              emptyDir:
                medium: Memory
"""
    return f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {name}
  namespace: {r.choice(TEAMS)}
  labels:
    team: {r.choice(TEAMS)}
spec:
  runPolicy:
    activeDeadlineSeconds: {r.choice([3600, 86400, 259200])}
    backoffLimit: {r.choice([0, 3, 10])}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
{container}    Worker:
      replicas: {workers}
      restartPolicy: OnFailure
      template:
        spec:
{container}"""


def batch_job(r: random.Random, name: str, model: str) -> str:
    """A plain batch/v1 Job running torchrun (indexed, one pod per node)."""
    gpus = r.choice([1, 2, 4, 8])
    nodes = r.choice([1, 2, 4])
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {r.choice(TEAMS)}
  labels:
    team: {r.choice(TEAMS)}
spec:
  completionMode: Indexed
  completions: {nodes}
  parallelism: {nodes}
  backoffLimit: {r.choice([0, 3])}
  activeDeadlineSeconds: {r.choice([3600, 86400])}
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: {image(r)}
          command:
            - torchrun
            - --nnodes={nodes}
            - --nproc_per_node={gpus}
            - train.py
            - --model_name_or_path={model}
            - --save_steps={r.choice([100, 500, 2000])}
          resources:
            limits:
              nvidia.com/gpu: {gpus}
              memory: {r.choice([64, 256])}Gi
      nodeSelector:
        nvidia.com/gpu.product: {r.choice(K8S_PRODUCTS)}
"""


def skypilot(r: random.Random, name: str, model: str) -> str:
    gpus = r.choice([1, 4, 8])
    return f"""name: {name}

resources:
  accelerators: {r.choice(SKY_GPUS)}:{gpus}
  use_spot: {r.choice(["true", "false"])}
  disk_size: {r.choice([256, 512, 1024])}
  labels:
    team: {r.choice(TEAMS)}

num_nodes: {r.choice([1, 2, 4])}

envs:
  MODEL: {model}
  WANDB_PROJECT: {name}

setup: |
  pip install -r requirements.txt

run: |
  torchrun --nnodes=$SKYPILOT_NUM_NODES --nproc_per_node={gpus} \\
    --master_addr=$(echo "$SKYPILOT_NODE_IPS" | head -n1) train.py \\
    --model_name_or_path $MODEL --save_steps {r.choice([100, 1000])} --bf16
"""


def torchtitan(r: random.Random, name: str) -> str:
    return f"""# torchtitan Config.toml for {name}

[job]
dump_folder = "./outputs"
description = "{name}"

[profiling]
enable_profiling = {r.choice(["true", "false"])}
save_traces_folder = "profile_trace"
profile_freq = 100

[metrics]
log_freq = {r.choice([1, 10, 100])}
enable_tensorboard = true

[model]
name = "llama3"
flavor = "{r.choice(["8B", "70B", "debugmodel"])}"
tokenizer_path = "./assets/tokenizer/original/tokenizer.model"

[optimizer]
name = "AdamW"
lr = 3e-4

[training]
batch_size = {r.choice([1, 2, 4])}
seq_len = {r.choice([2048, 4096, 8192])}
max_norm = 1.0
steps = {r.choice([1000, 10000, 100000])}
compile = {r.choice(["true", "false"])}
dataset = "c4"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = {r.choice([1, 2, 8])}

[checkpoint]
enable_checkpoint = true
folder = "checkpoint"
interval = {r.choice([10, 500, 1000])}
async_mode = "{r.choice(["disabled", "async"])}"

[activation_checkpoint]
mode = '{r.choice(["none", "selective", "full"])}'
"""


def nanogpt(r: random.Random, name: str) -> str:
    return f"""# {name}: GPT-2 on OpenWebText.
# Run: torchrun --standalone --nproc_per_node={r.choice([1, 8])} train.py config/{name}.py

wandb_log = {r.choice(["True", "False"])}
wandb_project = 'owt'
wandb_run_name = '{name}'

batch_size = {r.choice([8, 12, 16])}
block_size = {r.choice([256, 512, 1024])}
gradient_accumulation_steps = 5 * 8

n_layer = {r.choice([6, 12, 24])}
n_head = 12
n_embd = 768

max_iters = {r.choice([5000, 600_000])}
lr_decay_iters = 600000
eval_interval = {r.choice([10, 250, 2000])}
eval_iters = 200
log_interval = 10
weight_decay = 1e-1
dtype = '{r.choice(["bfloat16", "float16", "float32"])}'
compile = {r.choice(["True", "False"])}
"""


# ---------------------------------------------------------------------------- job kinds
def job_slurm_hf_ds(r: random.Random, name: str, _corpus: list[tuple[str, str]]) -> Files:
    model = r.choice(MODELS)
    return {
        "train.slurm": slurm(r, name, "configs/sft.yaml", "configs/ds_zero.json"),
        "configs/sft.yaml": hf_yaml(r, model),
        "configs/ds_zero.json": ds_json(r),
    }


def job_torchrun(r: random.Random, name: str, _corpus: list[tuple[str, str]]) -> Files:
    return {"run.sh": torchrun_sh(r, name, r.choice(MODELS))}


def job_kubernetes(r: random.Random, name: str, _corpus: list[tuple[str, str]]) -> Files:
    return {"pytorchjob.yaml": pytorchjob(r, name, r.choice(MODELS))}


def job_batch_job(r: random.Random, name: str, _corpus: list[tuple[str, str]]) -> Files:
    return {"job.yaml": batch_job(r, name, r.choice(MODELS))}


def job_skypilot(r: random.Random, name: str, _corpus: list[tuple[str, str]]) -> Files:
    return {"train.sky.yaml": skypilot(r, name, r.choice(MODELS))}


def job_torchtitan(r: random.Random, name: str, _corpus: list[tuple[str, str]]) -> Files:
    return {f"train_configs/{name}.toml": torchtitan(r, name)}


def job_nanogpt(r: random.Random, name: str, _corpus: list[tuple[str, str]]) -> Files:
    return {f"config/{name.replace('-', '_')}.py": nanogpt(r, name)}


def job_corpus(r: random.Random, name: str, corpus: list[tuple[str, str]]) -> Files:
    """One corpus file at its original path, its small integers varied; a launch script
    beside it for a third of them (so GPU counts are known, as in a real repository)."""
    original, text = r.choice(corpus)
    files = {original: vary(r, text)}
    if r.random() < 0.33 and original.endswith((".yaml", ".yml")):
        files["launch.sh"] = (
            "#!/bin/bash\n"
            f"#SBATCH --job-name={name}\n"
            f"#SBATCH --gres=gpu:{r.choice(GPUS)}:{r.choice([1, 4, 8])}\n"
            f"#SBATCH --time={r.choice(['06:00:00', '48:00:00'])}\n"
            f"accelerate launch train.py --config {original}\n"
        )
    return files


KINDS: dict[str, tuple[float, Callable[[random.Random, str, list[tuple[str, str]]], Files]]] = {
    "slurm-hf-deepspeed": (0.22, job_slurm_hf_ds),
    "torchrun": (0.12, job_torchrun),
    "kubernetes": (0.09, job_kubernetes),
    "kubernetes-job": (0.03, job_batch_job),
    "skypilot": (0.08, job_skypilot),
    "torchtitan": (0.06, job_torchtitan),
    "nanogpt": (0.05, job_nanogpt),
    "corpus": (0.35, job_corpus),
}


def vary(r: random.Random, text: str) -> str:
    """Scale about a third of the small integer values by 1/2 or 2 (shape and size kept)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        match = _INT_LINE.match(body)
        if match and r.random() < 0.33:
            value = int(match.group(2))
            if value >= 2:
                value = max(1, value * 2 if r.random() < 0.5 else value // 2)
                lines[i] = match.group(1) + str(value) + match.group(3) + line[len(body) :]
    return "".join(lines)


def load_corpus(root: Path) -> list[tuple[str, str]]:
    """(original repository path, text) of every corpus file listed in MANIFEST.tsv."""
    manifest = root / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    templates = []
    for row in manifest.read_text(encoding="utf-8").splitlines()[1:]:
        fields = row.split("\t")
        if len(fields) >= 4 and (root / fields[0]).is_file():
            text = (root / fields[0]).read_text(encoding="utf-8", errors="replace")
            templates.append((fields[3], text))
    return templates


def generate(
    files: int, out: Path, seed: int = 0, only: str | None = None, corpus_root: Path = CORPUS
) -> tuple[int, int]:
    """Write about ``files`` files under ``out`` (cleared first); returns (files, jobs)."""
    r = random.Random(seed)
    corpus = load_corpus(corpus_root)
    kinds = {k: v for k, v in KINDS.items() if (only is None or k == only)}
    if not corpus:
        kinds.pop("corpus", None)
    if not kinds:
        raise SystemExit(f"no job kind left (--only {only!r}; corpus at {corpus_root})")
    names, weights = list(kinds), [kinds[k][0] for k in kinds]
    if out.exists():
        shutil.rmtree(out)
    written = jobs = 0
    while written < files:
        kind = r.choices(names, weights)[0]
        team = r.choice(TEAMS)
        name = f"{team}-{kind}-{jobs:05d}"
        job_files = kinds[kind][1](r, name, corpus)
        if only is None and written + len(job_files) > files:
            job_files = job_torchrun(r, name, corpus)  # one file to land exactly on N
        folder = out / "jobs" / team / name
        for relative, text in job_files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        written += len(job_files)
        jobs += 1
    return written, jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, required=True, help="number of files to write")
    parser.add_argument("--out", type=Path, required=True, help="output folder (replaced)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=sorted(KINDS), help="only jobs of this kind")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="template corpus folder")
    args = parser.parse_args()
    written, jobs = generate(args.files, args.out, args.seed, args.only, args.corpus)
    print(f"wrote {written} files ({jobs} jobs) under {args.out}")


if __name__ == "__main__":
    main()
