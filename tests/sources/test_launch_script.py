"""The launch-script source: exact facts and references for realistic scripts, flag forms,
secret redaction, SLURM option formats, and robustness on arbitrary input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from tests.sources.helpers import FactRow, RefRow, refs, rows
from trainlint.assemble import assemble
from trainlint.errors import SourceError
from trainlint.sources import all_sources, finish, launch_script, read_document
from trainlint.sources.base import Document, Input
from trainlint.sources.base.redact import secret_name
from trainlint.sources.shell import slurm

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


def read(name: str, text: str) -> Document:
    """As the registry reads a script (redaction and annotations included); SourceError
    propagates, as the registry's caller sees it before turning it into TL901."""
    file = Input(name, text)
    return finish(launch_script.parse(file), file)


def fact(doc: Document, pointer: str) -> Any:
    values = [f.value for f in doc.facts if f.pointer == pointer]
    assert values, f"no fact for {pointer}"
    return values[-1]


EXPECTED: dict[str, tuple[list[FactRow], list[RefRow]]] = {
    "accelerate_config.sh": (
        [
            ("/env/CUDA_VISIBLE_DEVICES", "0,1", 5, 1),
            ("/env/ACCELERATE_LOG_LEVEL", "info", 5, 26),
            ("/launcher/kind", "accelerate", 5, 52),
            ("/launcher/entrypoint", "scripts/run_sft.py", 9, 3),
            ("/training/precision", "bf16", 8, 3),
            ("/resources/gpus_per_node", 2, 5, 1),
            ("/training/grad_accum_steps", 16, 10, 3),
            ("/model/quantization_bits", 4, 11, 3),
            ("/logging/reporters", ["wandb", "tensorboard"], 12, 3),
        ],
        [
            ("configs/accelerate/fsdp.yaml", "config", 6, 3),
            ("recipes/sft/config_qlora.yaml", "config", 9, 22),
        ],
    ),
    "branches_and_functions.sh": (
        [
            ("/env/WANDB_PROJECT", "sweeps", 10, 12),
            ("/env/WANDB_API_KEY", "<redacted>", 11, 12),
            ("/env/LOG_DIR", "logs", 13, 8),
            ("/launcher/kind", "torchrun", 22, 16),
            ("/launcher/entrypoint", "train.py", 22, 62),
            ("/resources/nodes", 1, 22, 25),
            ("/resources/gpus_per_node", 8, 22, 38),  # DEBUG unset: the debug arm does not run
            ("/checkpoint/every_steps", 50.0, 23, 28),
        ],
        [],
    ),
    "deepspeed_launcher.sh": (
        [
            ("/launcher/kind", "deepspeed", 7, 1),
            ("/launcher/entrypoint", "finetune.py", 8, 4),
            ("/resources/gpus_per_node", 4, 7, 11),
            ("/resources/nodes", 1, 7, 24),
            ("/training/micro_batch_size", 2, 10, 4),
            ("/training/grad_accum_steps", 4, 11, 4),
            ("/training/epochs", 2.0, 12, 4),
            ("/training/seed", 1234, 13, 4),
            ("/training/parallelism/strategy", "deepspeed", 14, 4),
        ],
        [
            ("ds_config_z3.json", "deepspeed", 14, 16),
        ],
    ),
    "megatron_arrays.sh": (
        [
            ("/env/CUDA_DEVICE_MAX_CONNECTIONS", "1", 3, 8),
            ("/launcher/kind", "torchrun", 36, 1),
            ("/launcher/entrypoint", "pretrain_gpt.py", 36, 33),
            ("/resources/gpus_per_node", 8, 15, 5),
            ("/resources/nodes", 4, 16, 5),
            ("/model/layers", 24, 23, 5),
            ("/model/hidden", 2048, 24, 5),
            ("/model/seq_len", 4096, 25, 5),
            ("/training/micro_batch_size", 2, 29, 5),
            ("/training/global_batch_size", 256, 30, 5),
            ("/training/max_steps", 100000, 31, 5),
            ("/training/precision", "bf16", 32, 5),
            ("/training/seed", 42, 33, 5),
            ("/training/parallelism/tensor", 2, 39, 5),
            ("/checkpoint/every_steps", 1000, 40, 5),
        ],
        [],
    ),
    "mpirun_python.sh": (
        [
            ("/env/NCCL_IB_DISABLE", "1", 4, 8),
            ("/launcher/kind", "mpirun", 5, 5),
            ("/launcher/entrypoint", "deepspeed_train.py", 5, 12),
            ("/resources/world_size", 32, 3, 8),
            ("/resources/gpus_per_node", 8, 3, 14),
            ("/training/max_steps", 5000, 5, 74),
        ],
        [
            ("configs/bert_large.json", "deepspeed", 5, 31),
        ],
    ),
    "python_m_distributed.sh": (
        [
            ("/env/NCCL_DEBUG", "INFO", 2, 1),
            ("/env/TORCH_DISTRIBUTED_DEBUG", "DETAIL", 2, 17),
            ("/launcher/kind", "torchrun", 2, 61),
            ("/launcher/entrypoint", "trainer.main", 4, 8),
            ("/resources/gpus_per_node", 4, 3, 5),
            ("/resources/nodes", 2, 3, 24),
            ("/checkpoint/every_steps", 250.0, 4, 21),
            ("/eval/strategy", "steps", 4, 38),
            ("/eval/every_steps", 250.0, 4, 60),
            ("/training/seed", 7, 4, 77),
        ],
        [],
    ),
    "single_gpu_python.sh": (
        [
            ("/env/CUDA_VISIBLE_DEVICES", "0", 4, 1),
            ("/launcher/kind", "python", 4, 24),
            ("/launcher/entrypoint", "train.py", 4, 35),
            ("/resources/gpus_per_node", 1, 4, 1),
            ("/checkpoint/every_steps", 10.0, 4, 66),
            ("/training/max_steps", 2000, 4, 82),
            ("/training/precision", "fp16", 5, 5),
            ("/data/num_workers", 0, 5, 12),
        ],
        [("config/train_small.py", "config", 4, 44)],  # a nanoGPT-style Python config
    ),
    "slurm_torchrun_hf.slurm": (
        [
            ("/name", "llama-sft", 2, 9),
            ("/resources/nodes", 2, 3, 9),
            ("/resources/gpus_per_node", 8, 5, 9),
            ("/resources/gpu/model", "A100-40GB", 5, 9),
            ("/resources/gpu/memory_bytes", 42949672960, 5, 9),
            ("/resources/time_limit_s", 172800.0, 6, 9),
            ("/tags/account", "ml-research", 7, 9),
            ("/resources/placement/account", "ml-research", 7, 9),  # for the fleet's pools
            ("/tags/partition", "gpu-long", 8, 9),
            ("/resources/placement/partition", "gpu-long", 8, 9),
            ("/tags/team", "nlp", 9, 9),
            ("/tags/project", "llm-sft", 9, 9),
            ("/env/NCCL_DEBUG", "WARN", 14, 8),
            ("/env/HF_TOKEN", "<redacted>", 15, 8),
            ("/env/OMP_NUM_THREADS", "8", 16, 8),
            ("/launcher/kind", "torchrun", 24, 6),
            ("/launcher/entrypoint", "train.py", 29, 5),
            ("/resources/gpus_per_node", 8, 25, 5),
            ("/resources/nodes", 2, 26, 5),
            ("/model/name", "meta-llama/Llama-3.1-8B", 30, 5),
            ("/training/parallelism/strategy", "deepspeed", 31, 5),
            ("/training/micro_batch_size", 4, 32, 5),
            ("/training/grad_accum_steps", 8, 33, 5),
            ("/checkpoint/every_steps", 500.0, 34, 5),
            ("/checkpoint/keep_last", 3, 35, 5),
            ("/logging/every_steps", 10.0, 36, 5),
            ("/training/precision", "bf16", 37, 5),
            ("/training/activation_checkpointing", True, 38, 5),
        ],
        [
            ("configs/ds_zero3.json", "deepspeed", 31, 5),
        ],
    ),
    "srun_bash_c.sbatch": (
        [
            ("/name", "dpo-sweep", 2, 9),
            ("/resources/nodes", 4, 3, 9),
            ("/resources/gpus_per_node", 8, 4, 9),
            ("/resources/time_limit_s", 259200.0, 6, 9),
            ("/resources/placement/constraint", "h100", 7, 9),
            ("/resources/gpu/model", "H100-SXM", 7, 9),
            ("/resources/gpu/memory_bytes", 85899345920, 7, 9),
            ("/launcher/kind", "accelerate", 20, 14),
            ("/launcher/entrypoint", "scripts/dpo.py", 20, 14),
            ("/resources/nodes", 4, 20, 14),
            ("/resources/world_size", 32, 20, 14),
            ("/resources/gpus_per_node", 8, 20, 14),
            ("/eval/every_steps", 200.0, 20, 14),
        ],
        [
            ("recipes/accelerate_configs/zero3.yaml", "config", 20, 14),
            ("recipes/dpo/config_full.yaml", "config", 20, 14),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_facts_and_references_are_exact(name: str) -> None:
    doc = read(str(SCRIPTS / name), (SCRIPTS / name).read_text())
    expected_facts, expected_refs = EXPECTED[name]
    assert doc.format == "launch-script" and doc.role == "entrypoint"
    assert rows(doc) == expected_facts
    assert refs(doc) == expected_refs
    assert all(f.location.file == str(SCRIPTS / name) for f in doc.facts)


def test_every_fixture_is_covered_and_recognised() -> None:
    names = {p.name for p in SCRIPTS.iterdir()}
    assert names == set(EXPECTED)
    for path in SCRIPTS.iterdir():
        assert launch_script.recognise(Input(str(path), path.read_text())) == 0.9


def test_launcher_command_is_collapsed_and_redacted() -> None:
    doc = read("b.sh", (SCRIPTS / "branches_and_functions.sh").read_text())
    command = fact(doc, "/launcher/command")
    assert command.startswith("exec nohup torchrun --standalone --nproc_per_node=$NPROC train.py")
    assert "--hub_token <redacted>" in command
    assert "\\" not in command and "  " not in command
    doc = read("s.slurm", (SCRIPTS / "slurm_torchrun_hf.slurm").read_text())
    assert fact(doc, "/launcher/command").startswith(
        "srun torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --rdzv_backend c10d"
    )


@pytest.mark.parametrize("flags", ["--save_steps 10", "--save_steps=10", "--save-steps 10"])
def test_save_steps_forms_give_every_steps_at_the_flag(flags: str) -> None:
    doc = read("run.sh", f"torchrun --nproc_per_node=2 train.py  {flags} --bf16\n")
    assert ("/checkpoint/every_steps", 10.0, 1, 39) in rows(doc)
    assert ("/training/precision", "bf16", 1, 40 + len(flags)) in rows(doc)


def test_columns_count_characters_not_bytes() -> None:
    doc = read("run.sh", 'python train.py --run_name "é€ü" --save_steps 5\n')
    assert ("/checkpoint/every_steps", 5.0, 1, 34) in rows(doc)


def test_secrets_are_redacted_everywhere() -> None:
    token = "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
    openai = "sk-proj-QwErTyUiOpAsDfGhJkLzXcVbNm1234567890"
    text = (
        f"export HF_TOKEN={token}\n"
        f"export MY_SETTING={openai}\n"
        "export DB_PASSWORD=hunter2\n"
        "export WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567\n"
        f"HUGGING_FACE_HUB_TOKEN={token} python train.py --hub_token {token} "
        f"--push_to_hub --api_key={openai} --run_name {openai}\n"
    )
    doc = read("run.sh", text)
    env = {f.pointer: f.value for f in doc.facts if f.pointer.startswith("/env/")}
    assert env == {
        "/env/HF_TOKEN": "<redacted>",
        "/env/MY_SETTING": "<redacted>",
        "/env/DB_PASSWORD": "<redacted>",
        "/env/WANDB_API_KEY": "<redacted>",
        "/env/HUGGING_FACE_HUB_TOKEN": "<redacted>",
    }
    assert fact(doc, "/name") == "<redacted>"
    for secret in (token, openai, "hunter2", "0123456789abcdef0123456789abcdef"):
        assert secret not in repr(doc)


def test_ordinary_values_are_not_redacted() -> None:
    doc = read(
        "run.sh",
        "export WANDB_PROJECT=HuggingFaceH4_zephyr_7b_beta_full_run_v2\n"
        "export TOKENIZERS_PARALLELISM=false\n"
        "python train.py --model_name_or_path meta-llama/Meta-Llama-3.1-8B-Instruct\n",
    )
    assert fact(doc, "/env/WANDB_PROJECT") == "HuggingFaceH4_zephyr_7b_beta_full_run_v2"
    assert fact(doc, "/model/name") == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    # "token" counts only as a word of the name: TOKENIZERS_PARALLELISM is not a secret.
    assert fact(doc, "/env/TOKENIZERS_PARALLELISM") == "false"


@pytest.mark.parametrize("name", ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "--hub-token", "token"])
def test_token_names_are_secret(name: str) -> None:
    assert secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "TOKENIZERS_PARALLELISM", "--max_tokens", "dataset_tokens", "--input_key",
        "--data.input_key", "data.prompt_key", "--mm_use_im_patch_token", "PAD_TOKEN_ID",
        "--chosen_key", "keyword",
    ],
)  # fmt: skip
def test_token_counts_columns_and_switches_are_not_secret(name: str) -> None:
    assert not secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "DB_PASSWORD",
     "--wandb_key", "--logger.wandb.key", "--api-key", "MY_SERVICE_TOKEN", "client_secret"],
)  # fmt: skip
def test_credential_names_are_secret(name: str) -> None:
    assert secret_name(name)


def test_only_credentials_are_redacted_on_a_command_line() -> None:
    text = (
        "python train.py --data.input_key question --mm_use_im_patch_token False "
        "data.prompt_key=prompt --wandb_key abc123 --hub_token $HF_TOKEN\n"
    )
    command = fact(read("run.sh", text), "/launcher/command")
    assert command == (
        "python train.py --data.input_key question --mm_use_im_patch_token False "
        "data.prompt_key=prompt --wandb_key <redacted> --hub_token $HF_TOKEN"
    )


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("#SBATCH --gres=gpu:8", {"/resources/gpus_per_node": 8}),
        ("#SBATCH --gres=gpu:4(S:0-1),nvme:1", {"/resources/gpus_per_node": 4}),
        ("#SBATCH --gres gpu:a100-sxm4-80gb:4", {"/resources/gpus_per_node": 4,
                                                "/resources/gpu/model": "A100-80GB"}),
        ("#SBATCH --gpus-per-node=h100:8", {"/resources/gpus_per_node": 8,
                                            "/resources/gpu/model": "H100-SXM"}),
        ("#SBATCH --gpus-per-task=2 --ntasks-per-node=4", {"/resources/gpus_per_node": 8}),
        ("#SBATCH --gpus-per-task=2 --ntasks=8 --nodes=2",
         {"/resources/gpus_per_node": 8, "/resources/nodes": 2}),
        ("#SBATCH --gpus=16 -N 2", {"/resources/gpus_per_node": 8, "/resources/nodes": 2}),
        ("#SBATCH --gpus=16", {"/resources/gpus_per_node": 16}),  # one node unless -N
        ("#SBATCH -N=3", {"/resources/nodes": 3}),
        ("#SBATCH -N2", {"/resources/nodes": 2}),
        ("#SBATCH --nodes=2-4", {"/resources/nodes": 4}),
        ("#SBATCH --nodes=$NUM_NODES", {}),
        ("#SBATCH --constraint=volta32gb", {"/resources/gpu/model": "V100-32GB",
                                            "/resources/placement/constraint": "volta32gb"}),
        ("#SBATCH --constraint=a100|h100", {"/resources/placement/constraint": "a100|h100"}),
        ("#SBATCH --constraint=h100&ib", {"/resources/gpu/model": "H100-SXM",
                                          "/resources/placement/constraint": "h100&ib"}),
        ("#SBATCH -p gpu -A proj-7 -J run1", {"/tags/partition": "gpu",
                                              "/tags/account": "proj-7", "/name": "run1",
                                              "/resources/placement/partition": "gpu",
                                              "/resources/placement/account": "proj-7"}),
        ("#SBATCH --comment='cost-center=ml; owner=ana'", {"/tags/cost_center": "ml",
                                                          "/tags/owner": "ana"}),
        ("#SBATCH --comment=nightly run", {"/tags/comment": "nightly"}),
        ("#SBATCH --qos=high --wckey=proj/x", {"/tags/qos": "high", "/tags/wckey": "proj/x",
                                               "/resources/placement/qos": "high"}),
        ("# SBATCH --nodes=8", {}),
        ("##SBATCH --nodes=8", {}),
    ],
)  # fmt: skip
def test_sbatch_headers(header: str, expected: dict[str, Any]) -> None:
    doc = read("job.slurm", f"#!/bin/bash\n{header}\npython train.py\n")
    got = {f.pointer: f.value for f in doc.facts if not f.pointer.startswith("/launcher")}
    got.pop("/resources/gpu/memory_bytes", None)
    got.pop("/resources/scheduler", None)
    assert got == expected


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("job.sh", "#!/bin/bash\n#SBATCH --gpus=2\nyolo train data=coco.yaml\n", ("slurm", 2, 9)),
        ("job.slurm", "python train.py --max_steps 10\n", ("slurm", 1, 1)),
        ("run.sh", "srun --gpus=8 python train.py\n", ("slurm", 1, 1)),
        ("run.sh", "torchrun --nproc_per_node 8 train.py\n", None),
    ],
)
def test_slurm_schedules_batch_scripts_and_srun_launches(
    name: str, text: str, expected: tuple[str, int, int] | None
) -> None:
    """TL403 reads this fact: any batch script (whatever it runs) or srun launch is SLURM's."""
    found = [(f.value, f.location.line, f.location.column) for f in read(name, text).facts
             if f.pointer == "/resources/scheduler"]  # fmt: skip
    assert found == ([expected] if expected else [])


def test_sbatch_options_are_located_at_the_option() -> None:
    doc = read("job.slurm", "#SBATCH --nodes 2 -t 30  # half an hour\n#SBATCH  -A acct\n")
    assert rows(doc) == [
        ("/resources/nodes", 2, 1, 9),
        ("/resources/time_limit_s", 1800.0, 1, 19),
        ("/tags/account", "acct", 2, 10),
        ("/resources/placement/account", "acct", 2, 10),
    ]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 1800.0), ("30:15", 1815.0), ("01:59:00", 7140.0), ("72:00:00", 259200.0),
        ("2-12", 216000.0), ("1-02:30", 95400.0), ("3-00:00:00", 259200.0),
        ("0", None), ("UNLIMITED", None), ("infinite", None), ("1:2:3:4", None), ("x-1", None),
    ],
)  # fmt: skip
def test_slurm_time_formats(text: str, seconds: float | None) -> None:
    assert slurm.time_seconds(text) == seconds


def test_sbatch_headers_after_commands_and_in_heredocs() -> None:
    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\nset -e\n#SBATCH --nodes=3\n"
        "sbatch <<EOF\n#SBATCH --nodes=9\nsrun python x.py\nEOF\n"
    )
    doc = read("job.sh", text)
    # sbatch stops reading directives at the first command; heredoc bodies are not headers
    assert [f.value for f in doc.facts if f.pointer == "/resources/nodes"] == [2]


def test_slurm_variables_follow_the_headers() -> None:
    text = (
        "#SBATCH --nodes=4\n#SBATCH --gpus-per-node=8\n"
        "NNODES=${SLURM_NNODES:-1}\nRANK=${SLURM_PROCID:-0}\n"
        "torchrun --nnodes $NNODES --node_rank $RANK --nproc_per_node ${SLURM_GPUS_ON_NODE:-2} "
        "train.py\n"
    )
    assert rows(read("job.sh", text))[-2:] == [
        ("/resources/nodes", 4, 5, 10),
        ("/resources/gpus_per_node", 8, 5, 45),
    ]


def test_a_scheduler_variable_default_is_not_its_value() -> None:
    """A script that reads ``$SLURM_NNODES`` runs in an allocation: its default is not the
    node count, which stays unknown (stated, so no one-node world size is derived)."""
    text = "NNODES=${SLURM_NNODES:-2}\ntorchrun --nnodes=$NNODES --nproc_per_node 8 x.py\n"
    [job] = assemble_text("run.sh", text)
    assert job.resources.nodes is None and job.resources.world_size is None
    assert job.provenance["/resources/nodes"].line == 2


def assemble_text(name: str, text: str) -> list[Any]:
    from pathlib import Path as FsPath
    from tempfile import TemporaryDirectory

    with TemporaryDirectory() as folder:
        path = FsPath(folder) / name
        path.write_text(text)
        return assemble([path])


def test_srun_options_fill_in_only_what_headers_do_not_say() -> None:
    text = (
        "#SBATCH --nodes=2\n"
        "srun -N 8 --gres=gpu:4 --container-image img:1 --kill-on-bad-exit=1 --mpi pmix "
        "python -u train.py --max_steps 3\n"
    )
    doc = read("job.sh", text)
    assert rows(doc) == [
        ("/resources/nodes", 2, 1, 9),
        ("/launcher/kind", "srun", 2, 80),
        ("/launcher/entrypoint", "train.py", 2, 90),
        ("/resources/gpus_per_node", 4, 2, 11),
        ("/training/max_steps", 3, 2, 99),
    ]


@pytest.mark.parametrize(
    ("line", "kind", "entry", "gpus", "nodes"),
    [
        ("torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py", "torchrun",
         "train.py", 8, 1),
        ("torchrun --nproc_per_node=gpu --nnodes=2 --node_rank=0 --master_addr=10.0.0.1 "
         "--master_port=1234 train.py", "torchrun", "train.py", None, 2),
        ("torchrun --nnodes 2:4 --nproc-per-node 8 --rdzv_id 7 --rdzv_backend c10d "
         "--rdzv_endpoint host:29400 --max-restarts 3 --tee 3 --redirects 3 --log-dir logs "
         "--local-ranks-filter 0 -m olmo.train cfg.yaml", "torchrun", "olmo.train", 8, 4),
        ("python -m torch.distributed.launch --use_env --nproc_per_node 2 main.py", "torchrun",
         "main.py", 2, None),
        ("python3.11 -u -m torch.distributed.run --no-python --nproc-per-node 2 ./bin/train",
         "torchrun", "./bin/train", 2, None),
        ("deepspeed --num-gpus 2 --hostfile hf --include localhost:0,1 --launcher pdsh "
         "--master_addr a --ssh_port 22 run_clm.py", "deepspeed", "run_clm.py", 2, None),
        ("deepspeed --include localhost:0,1,2 --module trainer.cli", "deepspeed", "trainer.cli",
         3, None),
        ("python -m deepspeed.launcher.runner --num_gpus 4 train.py", "deepspeed", "train.py",
         4, None),
        ("accelerate launch --multi_gpu --num_processes 16 --num_machines 2 --machine_rank 0 "
         "--main_process_ip 10.0.0.1 --main_process_port 29500 --rdzv_backend c10d "
         "--dynamo_backend no --gpu_ids all -m axolotl.cli.train cfg.yml", "accelerate",
         "axolotl.cli.train", 8, 2),
        ("python -u -m accelerate.commands.launch --rdzv_conf 'rdzv_backend=c10d' "
         "--main_process_ip h --main_process_port 1 --config_file a.yml sp.py", "accelerate",
         "sp.py", None, None),
        ("exec time nice -n 5 timeout 2h env OMP_NUM_THREADS=4 torchrun --nproc_per_node 2 a.py",
         "torchrun", "a.py", 2, None),
        ("numactl --cpunodebind=0 -m 0 stdbuf -oL python train.py", "python", "train.py", None,
         None),
        ("apptainer exec --nv -B /data:/data img.sif torchrun --nproc_per_node 4 t.py",
         "torchrun", "t.py", 4, None),
        ("mpiexec -np 8 -ppn 4 -genv NCCL_DEBUG WARN python t.py", "mpirun", "t.py", 4, None),
        ("mpirun -np 4 ./bin/train_gpt2cu -b 8", "mpirun", "./bin/train_gpt2cu", None, None),
        ("srun --ntasks-per-node=8 ./entrypoint.sh train", "srun", "./entrypoint.sh", None,
         None),
        ("eval torchrun --nproc_per_node 2 t.py", "torchrun", "t.py", 2, None),
    ],
)  # fmt: skip
def test_launchers(line: str, kind: str, entry: str, gpus: int | None, nodes: int | None) -> None:
    doc = read("run.sh", line + "\n")
    values = {f.pointer: f.value for f in doc.facts}
    assert values["/launcher/kind"] == kind
    assert values.get("/launcher/entrypoint") == entry
    assert values.get("/resources/gpus_per_node") == gpus
    assert values.get("/resources/nodes") == nodes


def test_accelerate_options_and_references() -> None:
    doc = read(
        "run.sh",
        "accelerate launch --config_file acc.yaml --use_deepspeed --zero_stage 3 "
        "--deepspeed_config_file ds.json --num_processes 4 --mixed_precision fp16 t.py\n",
    )
    values = {f.pointer: f.value for f in doc.facts}
    assert values["/training/parallelism/strategy"] == "deepspeed"
    assert values["/training/parallelism/zero_stage"] == 3
    assert values["/resources/world_size"] == 4
    assert values["/training/precision"] == "fp16"
    assert "/resources/gpus_per_node" not in values  # machines unknown
    assert refs(doc) == [("acc.yaml", "config", 1, 19), ("ds.json", "deepspeed", 1, 73)]


def test_unknown_words_never_become_facts() -> None:
    text = (
        'GPUS=$(nvidia-smi -L | wc -l)\nNODES="$1"\n'
        "torchrun --nproc_per_node $GPUS --nnodes $NODES $EXTRA train.py --save_steps $EVERY "
        "--max_steps ${STEPS}\n"
    )
    values = {f.pointer: f.value for f in read("run.sh", text).facts}
    assert values["/launcher/entrypoint"] == "train.py"
    for pointer in ("/resources/gpus_per_node", "/checkpoint/every_steps", "/training/max_steps"):
        assert pointer not in values
    assert values["/resources/nodes"] is None  # --nnodes is stated, its value is unknown


def test_options_with_unknown_values_are_still_options() -> None:
    text = (
        "torchrun --nnodes=$SKYPILOT_NUM_NODES --nproc_per_node=$SKYPILOT_NUM_GPUS_PER_NODE "
        '--master_addr=$(echo "$SKYPILOT_NODE_IPS" | head -n1) --node_rank=$SKYPILOT_NODE_RANK '
        "main.py --seed 3\n"
    )
    values = {f.pointer: f.value for f in read("run.sh", text).facts}
    assert values["/launcher/entrypoint"] == "main.py"
    assert values["/training/seed"] == 3
    assert values["/resources/nodes"] is None  # stated, unknown: no one-node default


def test_an_unknown_script_word_is_the_entry() -> None:
    doc = read("run.sh", "torchrun --nproc_per_node 2 $SCRIPT --save_steps 10\n")
    values = {f.pointer: f.value for f in doc.facts}
    assert "/launcher/entrypoint" not in values
    assert values["/checkpoint/every_steps"] == 10.0


def test_the_training_launch_wins_over_helpers() -> None:
    text = (
        "python -m pip install -r requirements.txt\npython -c 'import torch'\n"
        "python download.py\nsrun hostname\npython train.py --seed 1\n"
        "torchrun --nproc_per_node 2 eval.py\n"
    )
    values = {f.pointer: f.value for f in read("run.sh", text).facts}
    assert values["/launcher/kind"] == "python"  # a distributed evaluation is no training
    assert values["/launcher/entrypoint"] == "train.py"
    assert values["/training/seed"] == 1
    text = text.replace("eval.py", "finetune.py")
    values = {f.pointer: f.value for f in read("run.sh", text).facts}
    assert (values["/launcher/kind"], values["/launcher/entrypoint"]) == ("torchrun", "finetune.py")


def test_exports_in_branches_are_not_facts_but_launches_are_found() -> None:
    text = (
        'if [ -n "$DEBUG" ]; then\n  export NCCL_DEBUG=INFO\n'
        "  torchrun --nproc_per_node 4 train.py --logging_steps 1\nfi\n"
    )
    doc = read("run.sh", text)
    assert "/env/NCCL_DEBUG" not in {f.pointer for f in doc.facts}
    assert ("/logging/every_steps", 1.0, 3, 40) in rows(doc)


def test_config_references() -> None:
    text = (
        "python train.py --config cfg/a.yaml --config_file=b.yml --deepspeed_config c.json "
        "d.yaml --output_dir out.json --config llama3/8B_full --deepspeed e.json --flag f.toml\n"
    )
    assert refs(read("run.sh", text)) == [
        ("cfg/a.yaml", "config", 1, 17),
        ("b.yml", "config", 1, 37),
        ("c.json", "deepspeed", 1, 57),
        ("d.yaml", "config", 1, 83),
        ("e.json", "deepspeed", 1, 136),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "torchrun --nproc_per_node=8 -m torchtitan.train --job.config_file {path}\n",
        "torchrun --nproc_per_node 8 train.py --job.config_file={path}\n",  # older layout
        'CONFIG_FILE=${{CONFIG_FILE:-"{path}"}}\ntorchrun --nproc_per_node=8 \\\n'
        '  -m torchtitan.train --job.config_file ${{CONFIG_FILE}} "$@"\n',  # run_train.sh
    ],
)
def test_torchtitan_job_config_file_is_a_reference(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = "train_configs/llama3_8b.toml"
    [ref] = refs(read("run_train.sh", text.format(path=path)))
    line = next(row for row in text.splitlines() if "--job" in row)
    where = (text.splitlines().index(line) + 1, line.index("--job") + 1)
    assert (ref[:2], ref[2:]) == ((path, "config"), where)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train_configs").mkdir()
    (tmp_path / path).write_text(
        "[job]\n[model]\nname = 'llama3'\nflavor = '8B'\n[training]\nsteps = 10\n"
    )
    (tmp_path / "run_train.sh").write_text(text.format(path=path))
    (job,) = assemble([Path("run_train.sh"), Path(path)])  # the TOML joins the script's job
    assert [s.format for s in job.sources] == ["launch-script", "torchtitan"]
    assert (job.resources.world_size, job.training.max_steps) == (8, 10)


@pytest.mark.parametrize(
    ("name", "text", "confidence"),
    [
        ("run.sh", "echo hi\n", 0.4),
        ("run.bash", "torchrun x.py\n", 0.9),
        ("job.sbatch", "#SBATCH -N 1\n", 0.9),
        ("job", "#!/usr/bin/env bash\npython x.py\n", 0.9),
        ("job", "#!/bin/sh -e\nls\n", 0.4),
        ("job", "#!/usr/bin/env python\nprint(1)\n", 0.0),
        ("x.yaml", "run: torchrun x.py\n", 0.0),
        ("x.py", "import os\n", 0.0),
    ],
)
def test_recognise(name: str, text: str, confidence: float) -> None:
    assert launch_script.recognise(Input(name, text)) == confidence


def test_registry_reads_scripts_as_launch_scripts() -> None:
    assert launch_script.FORMAT in all_sources()
    doc = read_document(Input("train.sh", (SCRIPTS / "deepspeed_launcher.sh").read_text()))
    assert isinstance(doc, Document) and doc.format == "launch-script"


ADVERSARIAL = [
    "\x00\x01\x02\xff\xfe binary \x00 junk \x7f",
    'torchrun --nproc_per_node 8 train.py --save_steps "10\n',
    "python train.py --x 'unterminated\n",
    "if then fi ((( $(( ${ ` \n",
    "$(" * 500,
    "{ " * 300 + "python t.py",
    "A=$A$A\n" * 40 + "python $A\n",
    "A=(x)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 20 + 'python "${A[@]}"\n',
    "echo ${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-${X:-1}}}}}}}}}}\n" * 3,
    "echo $((1/0)) $((2**999)) $((9223372036854775807*9)) $((-7%3))\n",
]


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_adversarial_inputs_only_ever_raise_source_errors(text: str) -> None:
    try:
        doc = read("x.sh", text)
    except SourceError as error:
        assert error.line >= 1 and error.column >= 1
        return
    check_locations(doc, text)


def test_a_ten_thousand_line_script() -> None:
    body = "".join(
        f"export V{i}=v{i}\nif [ $i -gt 0 ]; then X{i}=1; fi\n"
        f"torchrun --nproc_per_node {i % 8 + 1} t{i}.py --save_steps {i + 1} \\\n  --bf16\n"
        for i in range(2500)
    )
    doc = read("big.sh", body)
    assert fact(doc, "/launcher/entrypoint") == "t0.py"
    # the environment is the one the chosen (first) launch sees: only V0 is exported before it
    assert [f.pointer for f in doc.facts if f.pointer.startswith("/env/")] == ["/env/V0"]
    assert len(doc.references) == 0 and fact(doc, "/checkpoint/every_steps") == 1.0
    check_locations(doc, body)


def test_the_environment_is_the_one_the_launch_sees() -> None:
    text = (
        "export NCCL_DEBUG=INFO\nexport OMP_NUM_THREADS=4\nunset NCCL_DEBUG\n"
        "export TORCH_DISTRIBUTED_DEBUG=DETAIL\n"
        "torchrun --nproc_per_node 8 train.py\nexport CUDA_LAUNCH_BLOCKING=1\n"
    )
    doc = read("run.sh", text)
    env = {f.pointer: f.value for f in doc.facts if f.pointer.startswith("/env/")}
    assert env == {"/env/OMP_NUM_THREADS": "4", "/env/TORCH_DISTRIBUTED_DEBUG": "DETAIL"}


def test_scripts_run_by_the_script_are_references() -> None:
    text = "#SBATCH --nodes=1\nsrun --ntasks=1 bash scripts/run.sh --fast\nsbatch next.slurm\n"
    doc = read("submit.slurm", text)
    assert [(r.path, r.role, r.location.line) for r in doc.references] == [
        ("scripts/run.sh", "entrypoint", 2),
        ("next.slurm", "entrypoint", 3),
    ]


def test_an_unreadable_script_is_a_source_error_at_its_first_error() -> None:
    with pytest.raises(SourceError) as caught:
        read("x.sh", "# nothing to run\n  )) ((\n")
    assert (caught.value.line, caught.value.column) == (2, 3)


def test_a_partly_broken_script_still_yields_its_launch() -> None:
    for text in (
        'torchrun --nproc_per_node 2 t.py\necho "oops\n',
        "torchrun --nproc_per_node 2 t.py\nfi )\n",
    ):
        doc = read("x.sh", text)
        assert doc.errors == []
        assert fact(doc, "/resources/gpus_per_node") == 2


def test_oversized_input_is_a_source_error() -> None:
    with pytest.raises(SourceError):
        read("x.sh", "#" * (5 * 1024 * 1024))


def check_locations(doc: Document, text: str) -> None:
    lines = text.split("\n")
    for item in [*(f.location for f in doc.facts), *(r.location for r in doc.references)]:
        line, column = item.line, item.column
        assert 1 <= line <= len(lines), item
        assert 1 <= column <= len(lines[line - 1]) + 1, item


_TOKENS = st.sampled_from([
    "torchrun", "deepspeed", "accelerate", "launch", "python", "-m", "srun", "mpirun", "bash",
    "-c", "export", "declare", "-x", "A=1", "B=${A:-2}", "ARR=(", ")", '"${ARR[@]}"', "$A",
    "${B}", "$((A*B))", "--nproc_per_node", "--nnodes=2:4", "8", "train.py", "--save_steps",
    "--save_steps=10", "--bf16", "--deepspeed", "ds.json", "cfg.yaml", "\\\n", "\n", ";", "&&",
    "||", "|", "if", "then", "fi", "for", "in", "do", "done", "f()", "{", "}", "'", '"', "#",
    "#SBATCH", "--gres=gpu:a100:8", "-N", "--time=1-00:00", "<<EOF", "EOF", "$(", "`", "é",
    "HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ", "CUDA_VISIBLE_DEVICES=0,1", "case", "esac",
])  # fmt: skip


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TOKENS, max_size=40).map(" ".join))
def test_plausible_token_soup_never_crashes(text: str) -> None:
    test_adversarial_inputs_only_ever_raise_source_errors(text)
    try:
        doc = read("x.sh", text)
    except SourceError:
        return
    assert "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ" not in repr(doc)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(text: str) -> None:
    test_adversarial_inputs_only_ever_raise_source_errors(text)


def test_url_passwords_and_key_names_are_redacted() -> None:
    text = (
        '#SBATCH --comment="wandb_key=abc123def team=x"\n'
        "export DB=postgres://user:pa55w0rd@host/db\n"
        "torchrun --nproc_per_node 2 train.py --db_url postgres://user:pa55w0rd@host/db\n"
    )
    doc = read("run.sh", text)
    assert "pa55w0rd" not in repr(doc) and "abc123def" not in repr(doc)
    assert fact(doc, "/env/DB") == "postgres://user:<redacted>@host/db"
    assert fact(doc, "/tags/team") == "x"


@pytest.mark.parametrize(
    ("line", "kind", "entry", "references"),
    [
        ("axolotl train cfg/lora.yml --deepspeed ds/zero2.json", "axolotl", "train",
         [("cfg/lora.yml", "config"), ("ds/zero2.json", "deepspeed")]),
        ("llamafactory-cli train examples/qwen3_lora_sft.yaml", "llamafactory-cli", "train",
         [("examples/qwen3_lora_sft.yaml", "config")]),
        ("litgpt pretrain --config config_hub/tinyllama.yaml --devices 4", "litgpt", "pretrain",
         [("config_hub/tinyllama.yaml", "config")]),
        ("trl sft --config recipes/sft.yaml --save_steps 50", "trl", "sft",
         [("recipes/sft.yaml", "config")]),
        ("tune run --nproc_per_node 8 full_finetune_distributed --config llama3_1/70B_full",
         "tune", "full_finetune_distributed", []),  # a built-in config name, not a file
    ],
)  # fmt: skip
def test_training_tool_clis_are_launches(
    line: str, kind: str, entry: str, references: list[tuple[str, str]]
) -> None:
    doc = read("run.sh", f"#!/bin/bash\n{line}\n")
    assert (fact(doc, "/launcher/kind"), fact(doc, "/launcher/entrypoint")) == (kind, entry)
    assert [(r.path, r.role) for r in doc.references] == references


def test_tune_run_takes_torchrun_options() -> None:
    doc = read("run.sh", "tune run --nnodes 2 --nproc_per_node 8 lora_finetune_distributed\n")
    assert (fact(doc, "/resources/gpus_per_node"), fact(doc, "/resources/nodes")) == (8, 2)


def test_hydra_config_path_and_name_reference_the_primary_config() -> None:
    line = (
        "python examples/nlp/megatron_gpt_pretraining.py --config-path=conf "
        "--config-name=megatron_gpt_config trainer.devices=8\n"
    )
    doc = read("run.sh", line)
    assert [(r.path, r.location.column) for r in doc.references] == [
        ("examples/nlp/conf/megatron_gpt_config.yaml", 68)
    ]
    assert [(o.key, o.value) for o in doc.overrides] == [
        ("config-path", "conf"),
        ("config-name", "megatron_gpt_config"),
        ("trainer.devices", "8"),
    ]


RESTART_LOOPS = {  # script → the line of the uncapped restart loop, None when there is none
    "while true": ("while true; do\n  torchrun train.py\ndone\n", 1),
    "while :": ("export NCCL_DEBUG=WARN\nwhile :\ndo\n  torchrun train.py\ndone\n", 2),
    "until false": ("until false; do\n  torchrun train.py\ndone\n", 1),
    "for ((;;))": ("for ((;;)); do\n  torchrun train.py\ndone\n", 1),
    "counter": ("i=0\nwhile [ $i -lt 3 ]; do\n  torchrun train.py\n  i=$((i+1))\ndone\n", None),
    "break": ("while true; do\n  torchrun train.py && break\ndone\n", None),
    "exit": ("while true; do\n  torchrun train.py || exit 1\ndone\n", None),
    "return": ("run() {\n  while :; do\n    torchrun train.py\n    return\n  done\n}\nrun\n", None),
    "for attempts": ("for attempt in 1 2 3; do\n  torchrun train.py\ndone\n", None),
    "until true": ("until true; do\n  torchrun train.py\ndone\n", None),
    "set -e": ("set -eo pipefail\nwhile true; do\n  torchrun train.py\ndone\n", None),
    "set -o errexit": ("set -o errexit\nwhile true; do\n  torchrun train.py\ndone\n", None),
    "loop elsewhere": ("while true; do\n  sleep 60; nvidia-smi\ndone &\ntorchrun train.py\n", None),
    "set +e after set -e": ("set -e\nset +e\nwhile true; do\n  torchrun train.py\ndone\n", 3),
    "set +o errexit": ("set -o errexit\nset +o errexit\nuntil false; do torchrun t.py; done\n", 3),
    "sbatch heredoc": (
        "sbatch <<EOF\n#!/bin/bash\nwhile :; do\n  torchrun train.py\ndone\nEOF\n",
        3,
    ),
    "no loop": ("torchrun --max-restarts 3 --nproc_per_node=8 train.py\n", None),
    "shebang -e": ("#!/bin/bash -e\nwhile true; do\n  torchrun train.py\ndone\n", None),
    "shebang env -S": ("#!/usr/bin/env -S bash -eux\nwhile :; do torchrun t.py; done\n", None),
    "shebang, no -e": ("#!/usr/bin/env bash\nwhile true; do\n  torchrun train.py\ndone\n", 2),
    "while [ 1 ]": ("while [ 1 ]; do\n  torchrun train.py\ndone\n", 1),
    "while [[ true ]]": ("while [[ true ]]; do\n  torchrun train.py\ndone\n", 1),
    "while (( 1 ))": ("while (( 1 )); do\n  torchrun train.py\ndone\n", 1),
    "while /bin/true": ("while /bin/true; do\n  torchrun train.py\ndone\n", 1),
    "while (( 0 ))": ("while (( 0 )); do\n  torchrun train.py\ndone\n", None),
    "while [ $RETRY ]": ("while [ $RETRY ]; do\n  torchrun train.py\ndone\n", None),
    "while [ -f run ]": ("while [ -f run ]; do\n  torchrun train.py\ndone\n", None),
}


@pytest.mark.parametrize(("text", "line"), RESTART_LOOPS.values(), ids=RESTART_LOOPS.keys())
def test_restart_loop_is_an_endless_loop_around_the_launch(text: str, line: int | None) -> None:
    """``while true`` / ``while :`` / ``until false`` / ``for ((;;))`` around the launch with
    nothing that leaves it, at the loop's line; a counter, break, exit, return or set -e caps it."""
    doc = read("run.sh", text)
    assert fact(doc, "/launcher/kind") == "torchrun"
    found = [row for row in rows(doc) if row[0] == "/launcher/restart_loop"]
    assert found == ([] if line is None else [("/launcher/restart_loop", "uncapped", line, 1)])
