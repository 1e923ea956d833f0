"""GPT-NeoX configs: JSON-like YAML flow mappings, several merged per job (`deepy.py a.yml b.yml`).

NeoX accepts ``train_iters`` and ``train-iters`` alike (it replaces ``-`` by ``_`` on load), so
keys are matched in their snake form while facts keep the position of the key as written. The
files of one job are tied together by the launch script that names them; the DeepSpeed blocks
(``zero_optimization``, ``fp16``, ``optimizer``) live inside the same file.

Default (``Document.defaults``): ``seed`` 1234 (Megatron's) when unset, at the top of the
file.
"""

from __future__ import annotations

from typing import Any

from trainlint.job import Location, UnknownKey
from trainlint.sources.base import Document, Fact, Input, Role, seed_default, typos
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Format
from trainlint.sources.base.table import JobField, describe, facts_from_table
from trainlint.sources.megatron import TOKENIZER_VOCAB, tokenizer_vocab
from trainlint.sources.structured import KeyPath, Tree

name = "gpt-neox"
role: Role = "config"


def _always(result: Any) -> Any:
    return lambda value: result


def _stage(value: Any) -> int | None:
    stage = n.to_int(value)
    return stage if stage is not None and 0 <= stage <= 3 else None


def _offloaded(value: Any) -> bool | None:
    device = n.to_str(value)
    return None if device is None else device.lower() in {"cpu", "nvme"}


_LAUNCHERS = {"slurm": "srun", "openmpi": "mpirun", "mvapich": "mpirun", "pdsh": "deepspeed"}


def _launcher(value: Any) -> str | None:
    """NeoX starts ranks through DeepSpeed's runner; ``launcher`` picks how it reaches nodes."""
    text = (n.to_str(value) or "").strip().lower()
    return _LAUNCHERS.get(text, text or None)


def _vocab_file(value: Any) -> int | None:
    """``vocab_file: data/gpt2-vocab.json`` under NeoX's default ``GPT2BPETokenizer`` is
    GPT-2's vocabulary; any other file is unknown here."""
    text = (n.to_str(value) or "").replace("\\", "/").rsplit("/", 1)[-1].strip().lower()
    return TOKENIZER_VOCAB["gpt2bpetokenizer"] if text == "gpt2-vocab.json" else None


TABLE: dict[KeyPath, list[JobField]] = {
    (): [JobField("/training/parallelism/strategy", _always("deepspeed"))],
    ("num_layers",): [JobField("/model/layers", n.positive_int)],
    ("hidden_size",): [JobField("/model/hidden", n.positive_int)],
    ("num_attention_heads",): [JobField("/model/heads", n.positive_int)],
    ("num_kv_heads",): [JobField("/model/kv_heads", n.positive_int)],
    ("seq_length",): [JobField("/model/seq_len", n.positive_int)],
    ("vocab_file",): [JobField("/model/vocab", _vocab_file)],
    ("tokenizer_type",): [JobField("/model/vocab", tokenizer_vocab)],
    ("train_micro_batch_size_per_gpu",): [JobField("/training/micro_batch_size", n.positive_int)],
    ("gradient_accumulation_steps",): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("train_batch_size",): [JobField("/training/global_batch_size", n.positive_int)],
    ("train_iters",): [JobField("/training/max_steps", n.positive_int)],
    ("precision",): [JobField("/training/precision", n.precision)],
    ("fp16", "enabled"): [JobField("/training/precision", n.when_true("fp16"))],
    ("bf16", "enabled"): [JobField("/training/precision", n.when_true("bf16"))],
    ("optimizer", "type"): n.optimizer_fields(),
    ("zero_optimization", "stage"): [JobField("/training/parallelism/zero_stage", _stage)],
    ("zero_optimization", "cpu_offload"): [
        JobField("/training/parallelism/offload_optimizer", n.to_bool)
    ],
    ("zero_optimization", "offload_optimizer", "device"): [
        JobField("/training/parallelism/offload_optimizer", _offloaded)
    ],
    ("zero_optimization", "offload_param", "device"): [
        JobField("/training/parallelism/offload_params", _offloaded)
    ],
    ("model_parallel_size",): [JobField("/training/parallelism/tensor", n.positive_int)],
    ("pipe_parallel_size",): [JobField("/training/parallelism/pipeline", n.positive_int)],
    ("sequence_parallel",): [JobField("/training/parallelism/sequence_parallel", n.to_bool)],
    ("checkpoint_activations",): [JobField("/training/activation_checkpointing", n.to_bool)],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("save_interval",): [JobField("/checkpoint/every_steps", n.positive_int)],
    ("checkpoint_factor",): [JobField("/checkpoint/every_steps", n.positive_int)],
    ("keep_last_n_checkpoints",): [JobField("/checkpoint/keep_last", n.positive_int)],
    ("eval_interval",): [JobField("/eval/every_steps", n.positive_int)],
    ("log_interval",): [JobField("/logging/every_steps", n.positive_int)],
    ("wall_clock_breakdown",): [
        JobField("/logging/profiler/enabled", n.when_true(True)),
        JobField("/logging/profiler/scheduled", n.when_true(False)),  # times every step
    ],
    ("num_workers",): [JobField("/data/num_workers", n.to_int)],
    ("launcher",): [JobField("/launcher/kind", _launcher)],
    ("num_gpus",): [JobField("/resources/gpus_per_node", n.positive_int)],
    ("num_nodes",): [JobField("/resources/nodes", n.positive_int)],
    ("comment",): [JobField("/tags/comment", n.to_str)],  # passed to SLURM's --comment
}

# Keys found only in NeoX configs (snake form): two of them, or one of them plus model keys,
# mark the format. The "second file" kind (local_setup.yml) is recognised by its path keys.
_DISTINCTIVE = {
    "pipe_parallel_size", "model_parallel_size", "train_iters", "checkpoint_factor",
    "lr_decay_iters", "lr_decay_style", "data_impl", "pos_emb", "attention_config",
    "gpt_j_residual", "output_layer_parallelism", "checkpoint_validation_with_forward_pass",
    "deepspeed_slurm", "keep_last_n_checkpoints", "scaled_upper_triang_masked_softmax_fusion",
    "no_weight_tying", "init_method", "output_layer_init_method", "partition_activations",
    "synchronize_each_layer", "vocab_file", "merge_file", "train_data_paths", "use_wandb",
    "wandb_team", "make_vocab_size_divisible_by", "extra_save_iters", "checkpoint_num_layers",
}  # fmt: skip
_LIKELY = {
    "num_layers", "hidden_size", "num_attention_heads", "seq_length", "log_interval",
    "tensorboard_dir", "log_dir", "save", "load", "data_path", "train_micro_batch_size_per_gpu",
    "zero_optimization", "eval_interval", "launcher", "hostfile",
}  # fmt: skip

# Every NeoX argument seen in its documented configs, plus the DeepSpeed keys it forwards.
KNOWN_KEYS = frozenset({
    *(str(path[0]) for path in TABLE if path), *_DISTINCTIVE, *_LIKELY,
    "activation", "attention_dropout", "autotuning", "bias_gelu_fusion", "bias_dropout_fusion",
    "distributed_backend", "eval_iters", "finetune", "fp16", "bf16", "fp32_allreduce",
    "gradient_clipping", "hidden_dropout", "intermediate_size", "layernorm_fusion",
    "mamba_causal_conv_fusion", "mamba_inner_func_fusion", "mamba_selective_scan_fusion",
    "max_position_embeddings", "min_lr", "mlp_multiple_of", "moe_num_experts", "no_ssh_check",
    "norm", "optimizer", "override_lr_scheduler", "rms_norm_epsilon", "rope_fusion",
    "rotary_emb_base", "rotary_pct", "split", "steps_per_print", "te_columnparallel",
    "te_fp8_amax_compute_algo", "te_fp8_amax_history_len", "te_fp8_format", "te_fp8_margin",
    "te_fp8_mha", "te_fp8_wgrad", "te_layernorm_mlp", "te_mha", "te_rowparallel",
    "test_data_paths", "tokenizer_type", "use_bias_in_attn_linear", "use_bias_in_mlp",
    "use_bias_in_norms", "valid_data_paths", "wandb_group", "wandb_host", "wandb_project",
    "wandb_run_name", "wandb_init_all_ranks", "warmup", "weight_decay", "weight_by_num_documents",
    "weighted_sampler_alpha", "train_data_weights", "valid_data_weights", "test_data_weights",
    "layernorm_epsilon", "scalenorm_epsilon", "init_method_std", "scaled_masked_softmax_fusion",
    "apply_query_key_layer_scaling", "attention_softmax_in_fp32", "use_cpu_initialization",
    "sparsity_config", "num_unique_layers", "param_sharing_style", "fp16_lm_cross_entropy",
    "rpe_num_buckets", "rpe_max_distance", "opt_pos_emb_offset", "soft_prompt_tuning",
    "gmlp_attn_dim", "pipe_partition_method", "world_size", "optimizer_type", "zero_stage",
    "zero_reduce_scatter", "zero_contiguous_gradients", "zero_reduce_bucket_size",
    "zero_allgather_bucket_size", "lr", "use_bnb_optimizer", "use_checkpoint_lr_scheduler",
    "git_hash", "log_grad_pct_zeros", "log_param_norm", "log_grad_norm", "log_optimizer_states",
    "log_gradient_noise_scale", "gradient_noise_scale_n_batches", "checkpoint_scale",
    "checkpoint_in_cpu", "contiguous_checkpointing", "profile_backward", "profile",
    "profile_step_start", "profile_step_stop", "iteration", "is_pipe_parallel", "label_data_paths",
    "num_encoder_layers", "decoder_seq_length", "feedforward_size", "packing", "scheduler",
    "amp", "flops_profiler", "comms_logger", "include", "exclude", "master_port", "master_addr",
    "force_multi", "detect_nvlink_pairs", "account", "deepspeed_mpi", "save_iters",
    "moe_type", "moe_top_k", "moe_router_type", "moe_aux_loss_coeff", "num_experts",
    "sequence_parallel", "use_flashattn_swiglu", "use_fused_rmsnorm", "kv_channels",
    "eval_tasks", "tokenizer_path", "data_path_file", "memory_profiling", "hf_upload",
})  # fmt: skip


def snake(key: str) -> str:
    return key.replace("-", "_")


def normalised(tree: Tree) -> Tree:
    """The same document with every key in snake form; the position of a path is where its
    key was written. When both spellings occur, the later one wins, as in NeoX's own merge."""
    spans: dict[KeyPath, tuple[int, int]] = {(): tree.span(())}

    def convert(value: Any, written: KeyPath, path: KeyPath) -> Any:
        if isinstance(value, dict):
            result: dict[str, Any] = {}
            for key, child in value.items():
                new_key = snake(str(key))
                child_written, child_path = (*written, key), (*path, new_key)
                result.pop(new_key, None)  # the later spelling takes its place in the order
                result[new_key] = convert(child, child_written, child_path)
                spans[child_path] = tree.span(child_written)
            return result
        return value

    return Tree(convert(tree.data, (), ()), spans)


def recognise(file: Input) -> float:
    """Two NeoX-only keys (either spelling), or one with model dims; above DeepSpeed's 0.95,
    since a NeoX JSON carries DeepSpeed's keys too."""
    if not file.is_structured:
        return 0.0
    keys = {snake(str(key)) for key in file.mapping}
    distinctive, likely = len(keys & _DISTINCTIVE), len(keys & _LIKELY)
    if distinctive >= 3 or (distinctive >= 2 and likely >= 1):
        return 0.97
    if distinctive >= 2 or (distinctive == 1 and likely >= 2):
        return 0.9
    return 0.0


def parse(file: Input) -> Document:
    written = file.trees[0] if file.trees else Tree({})
    tree = normalised(written)
    doc = Document(file.path, name, recognise(file), role)
    facts = facts_from_table(tree, TABLE, file.path)
    data = tree.data if isinstance(tree.data, dict) else {}
    if n.to_str(data.get("checkpoint_scale", "linear")) == "log":
        facts = [fact for fact in facts if fact.pointer != "/checkpoint/every_steps"]
    doc.facts = facts + _reporters(tree, file.path)
    doc.unknown_keys = _near_misses(written, file.path)
    # GPT-NeoX's seed (Megatron's)
    doc.defaults = [seed_default(1234, "seed", file.path)]
    return doc


def _reporters(tree: Tree, file: str) -> list[Fact]:
    """TensorBoard when a log directory is given; W&B when enabled, or configured and not off."""
    data = tree.data if isinstance(tree.data, dict) else {}
    found: list[tuple[str, KeyPath]] = []
    if n.to_str(data.get("tensorboard_dir")):
        found.append(("tensorboard", ("tensorboard_dir",)))
    wandb_keys = [key for key in ("use_wandb", "wandb_project", "wandb_team") if key in data]
    use_wandb = n.to_bool(data.get("use_wandb"))
    if use_wandb or (use_wandb is None and any(data.get(k) for k in wandb_keys)):
        found.append(("wandb", (wandb_keys[0],)))
    if not found:
        return []
    line, column = min(tree.span(path) for _, path in found)
    where = Location(file=file, line=line, column=column)
    return [Fact("/logging/reporters", [reporter for reporter, _ in found], where)]


def _near_misses(tree: Tree, file: str) -> list[UnknownKey]:
    """Top-level keys one or two edits from a NeoX argument, reported as written."""
    data = tree.data if isinstance(tree.data, dict) else {}
    found = []
    for key in data:
        suggestion = typos.suggest(snake(str(key)), KNOWN_KEYS)
        if suggestion is not None:
            line, column = tree.span((str(key),))
            found.append(UnknownKey(file=file, line=line, column=column, key=str(key),
                                    format=name, suggestion=suggestion))  # fmt: skip
    return found


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "tensorboard_dir, use_wandb, wandb_project, wandb_team": ["/logging/reporters"]
    }


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("configs/125M.yml", "configs/local_setup.yml", "configs/20B.yml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    table=TABLE,
)
