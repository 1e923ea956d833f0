"""ESPnet2 training configs (``python -m espnet2.bin.asr_train --config conf/train_asr.yaml``):
one flat YAML of the task's command-line arguments, the trainer's (``max_epoch``,
``batch_bins``/``batch_size``, ``accum_grad``, ``use_amp``, ``keep_nbest_models``) beside the
model's class choices (``encoder: conformer`` with its ``encoder_conf``). ``batch_size`` is
the mini-batch of all GPUs together; ``batch_bins`` counts feature elements or frames, never
samples.

What the keys mean, read from ESPnet's code (espnet2/ of release 202412 and of the current
``espnet2/tasks/abs_task.py``):

- Every key is an argument of ``AbsTask.get_parser`` (espnet2/tasks/abs_task.py) or of the
  task's ``add_task_arguments``; ``ArgumentParser.parse_known_args``
  (espnet2/utils/config_argparse.py) stops at start-up on any other key, so a near-miss of a
  known key is a typo (TL903). A key ending in ``_conf`` holds a class choice's arguments.
- ``batch_size`` and ``batch_bins`` make one mini-batch for all GPUs together:
  ``AbsTask.build_sequence_iter_factory`` builds the batches and gives each rank
  ``batch[rank::world_size]``, ``AbsTask.build_chunk_iter_factory`` splits ``batch_size``
  over the ranks. An optimizer step takes ``accum_grad`` mini-batches
  (``Trainer.train_one_epoch``, espnet2/train/trainer.py, steps when
  ``iiter % accum_grad == 0``), so the global batch is ``batch_size x accum_grad``, stated
  only where ``batch_size`` counts samples exactly: utterances with ``batch_type``
  ``unsorted``/``sorted``, chunks with ``iterator_type: chunk``. The default ``folded`` batch
  shrinks to ``batch_size / (1 + length // fold_length)`` for long utterances
  (``FoldedBatchSampler.__init__``, espnet2/samplers/folded_batch_sampler.py) and ``numel``/
  ``length`` fill ``batch_bins`` feature elements or frames (``build_batch_sampler``,
  espnet2/samplers/build_batch_sampler.py): no number of samples, so no batch is stated.
- ``max_epoch`` is the number of passes over the data, unless ``num_iters_per_epoch`` makes
  an epoch that many mini-batches (``SequenceIterFactory.build_iter``,
  espnet2/iterators/sequence_iter_factory.py): the run is then ``max_epoch x
  (num_iters_per_epoch // accum_grad)`` optimizer steps. The chunk iterator counts samples
  there (``AbsTask.build_chunk_iter_factory``): neither is stated.
- After every epoch ``Trainer.run`` saves ``checkpoint.pth`` and ``{epoch}epoch.pth`` and
  removes the epoch files outside the ``keep_nbest_models`` best of each
  ``best_model_criterion``: one checkpoint per epoch (per ``num_iters_per_epoch //
  accum_grad`` steps) whatever the file says.
- ``use_amp: true`` autocasts to 16 bits with a GradScaler (``Trainer.run``,
  ``Trainer.train_one_epoch``): to bfloat16 where the GPU has it, else float16 (trainer.py's
  module-level ``autocast_args``; ``GANTrainer.train_one_epoch`` always float16). Both run at
  the same tensor-core peak, so the job model says fp16, which every GPU runs. Without it the
  model is cast to ``train_dtype`` (``AbsTask.main_worker``), float32 by default.
- ``ngpu`` is the GPUs of one node: ``AbsTask.main`` starts a process per GPU and a world of
  ``ngpu x num_nodes`` (espnet2/bin/launch.py: "The number of GPUs per node").
- ``use_deepspeed: true`` trains with ``DeepSpeedTrainer`` (espnet2/train/deepspeed_trainer.py,
  chosen in ``AbsTask.main_worker``): optimizer, accumulation and precision come from
  ``deepspeed_config`` and every epoch's checkpoint stays, so ESPnet's keys for them are not
  read. ``log_interval`` counts mini-batches (``Trainer.train_one_epoch``). ``patience``
  (early stopping in ``Trainer.run``), ``grad_clip`` and ``batch_bins`` have no place in the
  job model: known, not read.

Defaults (``Document.defaults``), from ``AbsTask.get_parser``: ``seed`` 0 and ``num_workers``
1 when unset, at the top of the file; its ``keep_nbest_models`` 10 is stated at ``max_epoch``
(retention is read only as a fact). A launch line's flags are read one by one (``Flags``):
those whose meaning depends on no other key, and ``--max_epoch`` as epochs (a cap that
``num_iters_per_epoch`` in the config would make steps is not seen there).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from trainlint.job import Location, UnknownKey
from trainlint.sources.base import (
    Document,
    DocumentDefault,
    Fact,
    Input,
    Role,
    seed_default,
    top_of,
)
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.table import JobField, describe, facts_for
from trainlint.sources.base.typos import near_misses
from trainlint.sources.structured import KeyPath, Tagged, Tree, flat
from trainlint.sources.structured.located import Locate, fact, table_facts, tree_locator

name = "espnet"
role: Role = "config"


def _nbest(value: Any) -> int | None:
    """``keep_nbest_models: 10`` or ``[5, 10]``: the trainer keeps the largest n-best."""
    counts = [n.positive_int(item) for item in (value if isinstance(value, list) else [value])]
    kept = [count for count in counts if count is not None]
    return max(kept) if kept else None


def _word(value: Any) -> str | None:
    text = n.to_str(value)
    return text.strip().lower() if text and text.strip() else None


def _wandb(value: Any) -> list[str] | None:
    return ["wandb"] if n.to_bool(value) else None


def _epochs(value: Any) -> float | None:
    """``max_epoch`` is an int (ESPnet's ``range`` over the epochs takes no other)."""
    epochs = n.positive_int(value)
    return None if epochs is None else float(epochs)


TABLE: dict[KeyPath, list[JobField]] = {
    ("accum_grad",): [JobField("/training/grad_accum_steps", n.positive_int)],
    ("ngpu",): [JobField("/resources/gpus_per_node", n.positive_int)],
    ("num_workers",): [JobField("/data/num_workers", n.to_int)],
    ("seed",): [JobField("/training/seed", n.to_int)],
    ("keep_nbest_models",): [JobField("/checkpoint/keep_last", _nbest)],
    ("optim",): n.optimizer_fields(),
    ("use_deepspeed",): [JobField("/training/parallelism/strategy", n.when_true("deepspeed"))],
    ("detect_anomaly",): [JobField("/logging/anomaly_detection", n.to_bool)],
    ("log_level",): [JobField("/logging/level", _word)],
    ("use_wandb",): [JobField("/logging/reporters", _wandb)],
}

# A launch line's flags, one at a time: the keys whose meaning depends on no other key, and
# ``--max_epoch`` as passes over the data (a config's ``num_iters_per_epoch`` is not seen here).
_FLAGS: dict[str, list[JobField]] = {
    **{str(path[0]): rules for path, rules in TABLE.items()},
    "max_epoch": [JobField("/training/epochs", _epochs)],
    "use_amp": [JobField("/training/precision", n.when_true("fp16"))],
}


# What DeepSpeedTrainer takes from the DeepSpeed config instead of ESPnet's keys.
_DEEPSPEED_DECIDES = (
    "/training/grad_accum_steps", "/training/global_batch_size", "/training/precision",
    "/training/optimizer/", "/checkpoint/keep_last", "/logging/every_steps",
)  # fmt: skip
_DTYPES = {"float32": "fp32", "float16": "fp16-true", "float64": "fp64"}
_DEFAULT_KEEP = 10  # AbsTask.get_parser: --keep_nbest_models default [10]

# Arguments of AbsTask.get_parser, the trainers and every task's add_task_arguments and class
# choices (espnet2/tasks/*.py, espnet2/train/*.py of release 202412 and the current
# abs_task.py), and what a run's dumped config.yaml adds (config, version, distributed).
KNOWN_KEYS = flat.words(
    """
accum_grad adapter allow_multi_rates allow_variable_data_keys asr_ctc asr_decoder attractor
aux_attention aux_ctc_tasks avoid_allzero_segment batch_bins batch_size batch_type
best_model_criterion bpemodel categories category_sample_size category_upsampling_factor
channel_reordering chunk_default_fs chunk_discard_short_samples chunk_excluded_key_prefixes
chunk_length chunk_max_abs_length chunk_shift_ratio cleaner codec codec_token_in_use
codec_token_per_frame collect_stats config corelm create_graph_in_tensorboard criterions
ctc_sample_rate cudnn_benchmark cudnn_deterministic cudnn_enabled dataset_scaling_factor
dataset_upsampling_factor ddp_comm_hook decoder deepspeed_config deliberationencoder
detect_anomaly diar_input_size diar_num_spk diffusion_model discrete_feats_extract discriminator
dist_backend dist_init_method dist_launcher dist_master_addr dist_master_port dist_rank
dist_world_size distributed drop_last_iter dry_run dynamic_mixing dynamic_mixing_gain_db
early_stopping_criterion encoder encoder_decoder_format energy_extract energy_normalize
enh_criterions enroll_segment exclude_weight_decay extra_asr_decoder extra_mt_decoder
extra_mt_encoder extractor fairseq_checkpoint feats_extract flexible_numspk fold_length
force_single_channel freeze_param frontend fs g2p generator generator_first grad_clip
grad_clip_type grad_noise gradient_as_bucket_view hier_encoder ignore_init_mismatch init
init_param input_size int_pad_value iterator_type keep_nbest_models kenlm_path label_aggregator
lm load_all_speakers load_spk_embedding local_rank log_interval log_level loss loss_weights
loss_wrappers losses mask_module max_batch_size max_cache_fd max_cache_size max_epoch
max_num_warning md_encoder min_batch_size model multi_task_dataset multiple_iterator
multiprocessing_distributed nbest_averaging_interval ngpu no_forward_run noise_apply_prob
noise_db_range noise_scp non_linguistic_symbols normalize num_att_plot num_cache_chunks
num_classes num_eval num_iters_per_epoch num_noise_type num_spk num_workers odim optim
output_dir output_size patience pitch_extract pitch_normalize pooling postdecoder postencoder
postfrontend pre_postencoder_norm pred_masked_weight pred_nomask_weight preencoder preprocessor
pretrain_path print_config projector promptencoder required resume rir_apply_prob rir_scp
s2st_type sample_rate save_strategy scheduler score_feats_extract seed segmenter separator
sharded_ddp short_noise_thres shuffle_within_batch skip_discriminator_prob sort_batch
sort_in_batch speaker_prompt_length specaug speech_segment speech_volume_normalize spk2utt
spk_num src_bpemodel src_g2p src_normalize src_token_list src_token_type st_ctc st_decoder
subtask_series svs synthesizer target_duration text_name tgt_bpemodel tgt_feats_extract tgt_g2p
tgt_normalize tgt_token_list tgt_token_type token_bias token_list token_type tokenizer
train_data_path_and_name_and_type train_dtype train_shape_file train_spk2enroll
transcript_token_list tts two_pass unit_encoder unit_token_list unused_parameters
upsampling_factor use_adapter use_amp use_deepspeed use_lang_prompt use_matplotlib
use_nlp_prompt use_preprocessor use_reverberant_ref use_tensorboard use_tf32 use_wandb utt2spk
val_scheduler_criterion valid_batch_bins valid_batch_size valid_batch_type
valid_data_path_and_name_and_type valid_iterator_type valid_max_cache_size valid_shape_file
version wandb_entity wandb_id wandb_model_log_interval wandb_name wandb_project
write_collected_feats ying_extract
"""
)
# The second and later optimizers of a multi-optimizer task (GAN TTS: optim2, scheduler2_conf).
_NUMBERED = re.compile(r"(?:optim|scheduler)\d+(?:_conf)?")

# Keys of ESPnet2's trainer and batch sampler that no other tool has at the top level.
_TRAINER_MARKS = frozenset({
    "batch_bins", "accum_grad", "keep_nbest_models", "best_model_criterion", "max_epoch",
    "batch_type", "num_iters_per_epoch", "val_scheduler_criterion", "early_stopping_criterion",
    "nbest_averaging_interval", "valid_batch_bins", "valid_batch_type", "fold_length",
    "sort_in_batch",
})  # fmt: skip
# Top-level keys of the toolkits that copied ESPnet's layout with other semantics: WeNet and
# FunASR keep the batch in ``dataset_conf`` and FunASR the trainer in ``train_conf``.
_OTHER_TOOLKITS = frozenset({"dataset_conf", "train_conf", "cmvn_file", "is_json_cmvn", "input_dim",
                      "output_dim"})  # fmt: skip


def recognise(file: Input) -> float:
    """Two of ESPnet2's trainer keys, or one beside a class choice (``encoder`` with its
    ``encoder_conf``). ESPnet reads its YAML with ``yaml.safe_load``, so a file with custom tags
    (SpeechBrain's HyperPyYAML ``!new:``) is another tool's."""
    if file.suffix not in ("yaml", "yml"):
        return 0.0
    data = file.mapping
    if _OTHER_TOOLKITS & set(data) or any(isinstance(value, Tagged) for value in data.values()):
        return 0.0
    marks = len(_TRAINER_MARKS & set(data))
    if marks >= 2 or (marks == 1 and _class_choice(data)):
        return 0.95
    return 0.0


def _class_choice(data: dict[str, Any]) -> bool:
    return any(isinstance(key, str) and f"{key}_conf" in data for key in data)


def parse(file: Input) -> Document:
    written = file.trees[0] if file.trees else Tree({})
    tree = flat.plain(written)
    data = tree.data if isinstance(tree.data, dict) else {}
    locate = tree_locator(tree, file.path)
    deepspeed = n.to_bool(data.get("use_deepspeed")) is True
    doc = Document(file.path, name, recognise(file), role)
    facts = table_facts(data, TABLE, locate) + _derived(data, locate)
    doc.facts = [f for f in facts if not (deepspeed and f.pointer.startswith(_DEEPSPEED_DECIDES))]
    doc.unknown_keys = _typos(written, file.path)
    if deepspeed:
        doc.references = flat.references(tree, {("deepspeed_config",): "deepspeed"}, file.path)
    doc.defaults = _defaults(top_of(file.path))
    return doc


def _derived(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """The facts that combine keys: run length, batch, precision, logging and checkpoints."""
    return [
        *_run_length(data, locate),
        *_global_batch(data, locate),
        *_precision(data, locate),
        *_log_every(data, locate),
        *_checkpoints(data, locate),
        *_retention(data, locate),
    ]


def _accum(data: dict[str, Any]) -> int:
    return n.positive_int(data.get("accum_grad")) or 1


def _chunks(data: dict[str, Any]) -> bool:
    return _word(data.get("iterator_type")) == "chunk"


def _steps_per_epoch(data: dict[str, Any]) -> int | None:
    """Optimizer steps in an epoch capped at ``num_iters_per_epoch`` mini-batches (None when
    uncapped, or for the chunk iterator, whose cap counts samples)."""
    iterations = n.positive_int(data.get("num_iters_per_epoch"))
    if iterations is None or _chunks(data):
        return None
    return iterations // _accum(data) or None


def _run_length(data: dict[str, Any], locate: Locate) -> list[Fact]:
    epochs = _epochs(data.get("max_epoch"))
    if epochs is None:
        return []
    where = locate(("max_epoch",))
    if n.positive_int(data.get("num_iters_per_epoch")) is None:
        return fact("/training/epochs", epochs, where)
    per_epoch = _steps_per_epoch(data)
    return fact("/training/max_steps", int(epochs) * per_epoch if per_epoch else None, where)


def _global_batch(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """``batch_size x accum_grad`` where ``batch_size`` counts samples exactly."""
    size = n.positive_int(data.get("batch_size"))
    iterator = _word(data.get("iterator_type")) or "sequence"
    batch_type = _word(data.get("batch_type")) or "folded"
    exact = iterator == "chunk" or (iterator == "sequence" and batch_type in ("unsorted", "sorted"))
    if size is None or not exact:
        return []
    return fact("/training/global_batch_size", size * _accum(data), locate(("batch_size",)))


def _precision(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """``use_amp: true`` is 16-bit autocast; otherwise the model trains in ``train_dtype``
    (float32 when only ``use_amp: false`` is written)."""
    amp = n.to_bool(data.get("use_amp"))
    if amp:
        return fact("/training/precision", "fp16", locate(("use_amp",)))
    dtype = _DTYPES.get(_word(data.get("train_dtype")) or "")
    if dtype is not None:
        return fact("/training/precision", dtype, locate(("train_dtype",)))
    return fact("/training/precision", "fp32" if amp is False else None, locate(("use_amp",)))


def _log_every(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """``log_interval`` mini-batches, in optimizer steps when they divide evenly."""
    interval = n.positive_int(data.get("log_interval"))
    if interval is None or interval % _accum(data):
        return []
    return fact("/logging/every_steps", float(interval // _accum(data)), locate(("log_interval",)))


def _retention(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """Unset ``keep_nbest_models`` keeps ``AbsTask.get_parser``'s 10 best epochs. Stated, not
    a Default: the checkpoint estimate and TL202 read only a stated retention, and would call
    ESPnet's bounded checkpoints unbounded."""
    if "keep_nbest_models" in data:
        return []
    return fact("/checkpoint/keep_last", _DEFAULT_KEEP, locate(("max_epoch",)))


def _checkpoints(data: dict[str, Any], locate: Locate) -> list[Fact]:
    """A checkpoint after every epoch: every ``num_iters_per_epoch // accum_grad`` steps when
    that caps an epoch, else every pass over the data."""
    if n.positive_int(data.get("num_iters_per_epoch")) is None:
        where = locate(("max_epoch",))
        return fact("/checkpoint/every_epochs", 1.0, where) + fact(
            "/checkpoint/strategy", "epoch", where
        )
    every = _steps_per_epoch(data)
    if every is None:
        return []
    where = locate(("num_iters_per_epoch",))
    return fact("/checkpoint/every_steps", every, where) + fact(
        "/checkpoint/strategy", "steps", where
    )


def _typos(tree: Tree, file: str) -> list[UnknownKey]:
    """Near-misses of ESPnet's arguments; a class choice and its ``*_conf`` are always known."""
    data = tree.data if isinstance(tree.data, dict) else {}
    choices = {
        key for key in map(str, data)
        if key.endswith("_conf") or f"{key}_conf" in data or _NUMBERED.fullmatch(key)
    }  # fmt: skip
    return near_misses(tree, KNOWN_KEYS | choices, name, file)


def _defaults(where: Location) -> list[DocumentDefault]:
    """``AbsTask.get_parser``'s seed and data loader workers."""
    return [
        seed_default(0, "seed", where.file),
        DocumentDefault("/data/num_workers", 1, "num_workers", where),
    ]


def keys() -> dict[str, list[str]]:
    """Every key this format reads → the job-model pointers it sets (docs/formats.md)."""
    return describe(TABLE) | {
        "max_epoch (without num_iters_per_epoch)": ["/training/epochs"],
        "max_epoch x (num_iters_per_epoch // accum_grad)": ["/training/max_steps"],
        "batch_size x accum_grad (batch_type unsorted/sorted, or iterator_type chunk)": [
            "/training/global_batch_size"
        ],
        "use_amp: true (fp16), else train_dtype": ["/training/precision"],
        "log_interval // accum_grad": ["/logging/every_steps"],
        "every epoch (every num_iters_per_epoch // accum_grad steps)": [
            "/checkpoint/every_epochs",
            "/checkpoint/every_steps",
            "/checkpoint/strategy",
        ],
        "keep_nbest_models unset (10)": ["/checkpoint/keep_last"],
        "deepspeed_config (with use_deepspeed: true)": ["(reference)"],
        "flags of espnet2.bin.*_train: " + ", ".join(f"--{key}" for key in _FLAGS): sorted(
            {rule.pointer for rules in _FLAGS.values() for rule in rules}
        ),
    }


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """``--ngpu 4`` after ``python -m espnet2.bin.asr_train`` (ESPnet's flags use ``_``)."""
    return facts_for(_FLAGS.get(flag.lstrip("-"), []), value, location)


def cli_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """ESPnet's seed and workers for a launch line, beside the first flag it states."""
    return _defaults(facts[0].location) if facts else []


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("conf/train_asr.yaml", "conf/tuning/train_asr_conformer.yaml"),
    reads="mapping",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(
        cli_facts, entrypoints=re.compile(r"espnet2[./]bin[./]\w+_train\b"), defaults=cli_defaults
    ),
)
