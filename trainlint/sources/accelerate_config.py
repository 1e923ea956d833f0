"""Hugging Face Accelerate config YAML (``accelerate launch --config_file``): GPUs, nodes,
precision and the FSDP / DeepSpeed / N-D parallelism plugins.

``num_processes`` is the TOTAL process count across machines (one per GPU), so it is the world
size; GPUs per node follow when it divides evenly by a stated ``num_machines``.

FSDP sharding strategies are stated as the ZeRO stage they shard like, so memory rules need one
notion of sharding: FULL_SHARD (parameters, gradients and optimizer state) is ZeRO-3,
SHARD_GRAD_OP (gradients and optimizer state) is ZeRO-2, NO_SHARD is plain data parallelism (0),
and HYBRID_SHARD shards like FULL_SHARD within a node (3). FSDP2's
``fsdp_reshard_after_forward: true`` is FULL_SHARD's behaviour (3), ``false`` SHARD_GRAD_OP's (2).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from trainlint.sources.base import Document, Input, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe
from trainlint.sources.structured import KeyPath, flat
from trainlint.sources.structured.flat import words

name = "accelerate"
role: Role = "config"

_STRATEGIES = {"FSDP": "fsdp", "DEEPSPEED": "deepspeed", "MEGATRON_LM": "megatron"}
_MULTI = ("MULTI_",)  # MULTI_GPU, MULTI_XPU, MULTI_NPU, ...: torch DDP on that accelerator
_SHARDING = {
    "FULL_SHARD": 3, "SHARD_GRAD_OP": 2, "HYBRID_SHARD": 3, "HYBRID_SHARD_ZERO2": 2,
    "NO_SHARD": 0, "1": 3, "2": 2, "3": 0, "4": 3, "5": 2,
}  # fmt: skip


def _strategy(value: Any) -> str | None:
    text = (n.to_str(value) or "").strip().upper()
    return _STRATEGIES.get(text) or ("ddp" if text.startswith(_MULTI) else None)


def sharding_stage(value: Any) -> int | None:
    """FSDP sharding (strategy name or number, or FSDP2 reshard flag) → equivalent ZeRO stage."""
    if isinstance(value, bool) or str(value).strip().lower() in {"true", "false"}:
        return 3 if n.to_bool(value) else 2
    return _SHARDING.get((n.to_str(value) or "").strip().upper())


def offloaded(value: Any) -> bool | None:
    """DeepSpeed offload devices: ``cpu``/``nvme`` offload, ``none`` keeps state on the GPU."""
    device = n.to_str(value)
    return None if device is None else device.strip().lower() in {"cpu", "nvme"}


def _compiled(value: Any) -> bool | None:
    backend = n.to_str(value)
    return None if backend is None else backend.strip().upper() not in {"NO", ""}


_FSDP = "fsdp_config"
_DS = "deepspeed_config"
TABLE: dict[KeyPath, list[JobField]] = {
    ("distributed_type",): [JobField("/training/parallelism/strategy", _strategy)],
    ("num_processes",): [JobField("/resources/world_size", n.positive_int)],
    ("num_machines",): [JobField("/resources/nodes", n.positive_int)],
    ("mixed_precision",): [
        JobField("/training/precision", n.precision),
        JobField(
            "/features/fp8", lambda value: "precision" if n.precision(value) == "fp8" else None
        ),
    ],
    ("dynamo_config", "dynamo_backend"): [JobField("/training/compile", _compiled)],
    (_FSDP, "fsdp_sharding_strategy"): [
        JobField("/training/parallelism/zero_stage", sharding_stage)
    ],
    (_FSDP, "fsdp_reshard_after_forward"): [
        JobField("/training/parallelism/zero_stage", sharding_stage)
    ],
    (_FSDP, "fsdp_offload_params"): [JobField("/training/parallelism/offload_params", n.to_bool)],
    (_FSDP, "fsdp_activation_checkpointing"): [
        JobField("/training/activation_checkpointing", n.to_bool)
    ],
    (_DS, "zero_stage"): [JobField("/training/parallelism/zero_stage", n.to_int)],
    (_DS, "offload_optimizer_device"): [
        JobField("/training/parallelism/offload_optimizer", offloaded)
    ],
    (_DS, "offload_param_device"): [JobField("/training/parallelism/offload_params", offloaded)],
    (_DS, "gradient_accumulation_steps"): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("parallelism_config", "parallelism_config_tp_size"): [
        JobField("/training/parallelism/tensor", n.positive_int)
    ],
}
REFERENCES: dict[KeyPath, Role] = {(_DS, "deepspeed_config_file"): "deepspeed"}

# ClusterConfig / SageMakerConfig fields and the ``accelerate launch`` options a config may set.
TOP_KEYS = words(
    """
    additional_args base_job_name command_file commands compute_environment debug deepspeed_config
    downcast_bf16 dynamo_config ec2_instance_type enable_cpu_affinity fp8_config fsdp_config
    gpu_ids iam_role_name image_uri machine_rank main_process_ip main_process_port
    main_training_function megatron_lm_config mixed_precision mpirun_config
    num_cpu_threads_per_process num_machines num_processes parallelism_config profile py_version
    pytorch_version rdzv_backend
    rdzv_conf region same_network sagemaker_inputs_file sagemaker_metrics_file tpu_env tpu_name
    tpu_use_cluster tpu_use_sudo tpu_vm tpu_zone transformers_version use_cpu ipex_config
    max_restarts monitor_interval tee log_dir
    """
)
FSDP_KEYS = words(
    """
    fsdp_activation_checkpointing fsdp_activation_checkpointing_offload fsdp_auto_wrap_policy
    fsdp_backward_prefetch fsdp_cpu_ram_efficient_loading fsdp_forward_prefetch
    fsdp_ignored_modules fsdp_min_num_params fsdp_offload_params fsdp_reshard_after_forward
    fsdp_sharding_strategy fsdp_state_dict_type fsdp_sync_module_states
    fsdp_transformer_layer_cls_to_wrap fsdp_use_orig_params fsdp_version
    """
)
DEEPSPEED_KEYS = words(
    """
    deepspeed_config_file deepspeed_exclusion_filter deepspeed_hostfile deepspeed_inclusion_filter
    deepspeed_moe_layer_cls_names deepspeed_multinode_launcher gradient_accumulation_steps
    gradient_clipping offload_optimizer_device offload_optimizer_nvme_path offload_param_device
    offload_param_nvme_path zero3_init_flag zero3_save_16bit_model zero_stage
    seq_parallel_communication_data_type
    """
)
PARALLELISM_KEYS = frozenset(
    "parallelism_config_" + key
    for key in words(
        """cp_backend cp_comm_strategy cp_size dp_replicate_size dp_shard_size
        sp_attn_implementation sp_backend sp_seq_length sp_seq_length_is_variable sp_size tp_size"""
    )
)
KNOWN: dict[KeyPath, Collection[str]] = {
    (): TOP_KEYS, (_FSDP,): FSDP_KEYS, (_DS,): DEEPSPEED_KEYS,
    ("parallelism_config",): PARALLELISM_KEYS,
}  # fmt: skip

_VALUES = {"LOCAL_MACHINE", "AMAZON_SAGEMAKER", "NO", "MULTI_GPU", "FSDP", "DEEPSPEED"}


def recognise(file: Input) -> float:
    """``compute_environment`` and ``distributed_type`` are written only by ``accelerate
    config``; an accelerate value (``LOCAL_MACHINE``, ``MULTI_GPU``, ...) makes it certain."""
    if not file.is_structured or file.suffix == "json":
        return 0.0
    data = file.mapping
    marks = [data.get(key) for key in ("compute_environment", "distributed_type") if key in data]
    if not marks:
        return 0.0
    values = {str(value).upper() for value in marks}
    return 0.95 if values & _VALUES or any(v.startswith(_MULTI) for v in values) else 0.7


def parse(file: Input) -> Document:
    doc = flat.document(file, name, role, recognise(file), TABLE, KNOWN)
    tree = flat.plain(file.trees[0])
    doc.references = flat.references(tree, REFERENCES, file.path)
    return doc


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {".".join(map(str, path)): ["(reference)"] for path in REFERENCES}


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("default_config.yaml", "accelerate_configs/zero3.yaml", "fsdp_config.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
    claims=frozenset({"distributed_type", "compute_environment"}),
)
