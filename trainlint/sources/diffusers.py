"""The flags of 🤗 diffusers' example training scripts (``accelerate launch
train_dreambooth_lora_sdxl.py --train_batch_size 1 --max_train_steps 500 ...``).

diffusers has no config file: each example script (``examples/*/train_*.py``,
``textual_inversion.py``) defines the same argparse flags, read here by the script's name, so
they count whether or not the script is in the checked repository. What they mean, from the
scripts' parsers and loops:

- ``--train_batch_size`` is the batch of one GPU (the data loader's ``batch_size`` under
  ``accelerate``); ``--gradient_accumulation_steps`` multiplies it per optimizer step.
- ``--max_train_steps`` overrides ``--num_train_epochs`` when both are given.
- ``--checkpointing_steps`` saves the accelerator state every that many steps (the cosmos
  script: ``--checkpointing_epochs``), ``--checkpoints_total_limit`` keeps that many.
- ``--mixed_precision`` (``no``/``fp16``/``bf16``) is passed to ``Accelerator``; unset, the
  launcher's ``--mixed_precision`` or accelerate config decides, and without either accelerate
  trains in fp32 (its default ``no``): stated as this format's default, so a stated value wins.
- ``--resolution`` is the square side images are resized and cropped to;
  ``--pretrained_model_name_or_path`` the model trained from; ``--validation_steps`` runs the
  validation prompts every that many steps.
- ``--use_8bit_adam`` is bitsandbytes' 8-bit AdamW; ``--enable_xformers_memory_efficient_attention``
  swaps attention for xformers' kernel (a feature that must build on the cluster).
- ``--seed`` and ``--dataloader_num_workers`` as stated; their defaults differ between the
  scripts (read from the script's own definitions when it is in the repository).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from trainlint.job import Location
from trainlint.sources.base import DocumentDefault, Fact, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format, flag_keys, flags_only, no_file
from trainlint.sources.base.table import JobField, facts_for

name = "diffusers"
role: Role = "entrypoint"

FLAGS: dict[str, list[JobField]] = {
    "train_batch_size": [JobField("/training/micro_batch_size", n.positive_int)],
    "gradient_accumulation_steps": [JobField("/training/grad_accum_steps", n.positive_int)],
    "max_train_steps": [JobField("/training/max_steps", n.positive_int)],
    "num_train_epochs": [JobField("/training/epochs", n.positive_float)],
    "checkpointing_steps": [JobField("/checkpoint/every_steps", n.positive_int)],
    "checkpointing_epochs": [JobField("/checkpoint/every_epochs", n.positive_int)],
    "checkpoints_total_limit": [JobField("/checkpoint/keep_last", n.positive_int)],
    "mixed_precision": [JobField("/training/precision", n.precision)],
    "gradient_checkpointing": [JobField("/training/activation_checkpointing", n.to_bool)],
    "validation_steps": [JobField("/eval/every_steps", n.positive_int)],
    "resolution": [JobField("/data/image_size", n.image_side)],
    "pretrained_model_name_or_path": [JobField("/model/name", n.to_str)],
    "use_8bit_adam": n.optimizer_fields(),
    "enable_xformers_memory_efficient_attention": [
        JobField("/features/xformers", n.when_true("kernel"))
    ],
    "seed": [JobField("/training/seed", n.to_int)],
    "dataloader_num_workers": [JobField("/data/num_workers", n.to_int)],
    "report_to": [JobField("/logging/reporters", n.string_list)],
}

# The example scripts by name: examples/<task>/train_<task>[_lora][_sdxl|_flux|...].py and the
# research projects' train_<model>_*.py, and textual_inversion[_sdxl|_flux].py. kohya's
# sd-scripts (train_network.py, sdxl_train.py, train_db.py) are not diffusers'.
_TASKS = (
    "dreambooth", "text_to_image", "controlnet", "custom_diffusion", "instruct_pix2pix",
    "unconditional", "lcm_distill", "t2i_adapter", "amused", "cogvideox", "cogview", "pixart",
    "sana", "cosmos", "flux", "sd3", "sdxl", "lumina", "hidream", "hunyuan", "kandinsky",
    "wuerstchen", "qwen_image", "ltx", "wan", "diffusion_dpo", "diffusion_orpo", "realfill",
    "consistency_distillation", "gligen", "ip_adapter", "multi_subject", "prior",
)  # fmt: skip
ENTRYPOINTS = re.compile(
    rf"(?:^|/)(?:train_(?:{'|'.join(_TASKS)})\w*|textual_inversion(?:_sdxl|_flux)?)\.py$"
)


def cli_facts(flag: str, value: Any, location: Location) -> list[Fact]:
    """Facts for one flag of a diffusers example script; ``--use_8bit_adam`` names the
    optimizer it switches to."""
    key = n.flag_key(flag)
    if key == "use_8bit_adam":
        value = "adamw_8bit" if n.to_bool(value) is True else None
    return facts_for(FLAGS.get(key, []), value, location)


def cli_defaults(facts: Sequence[Fact]) -> list[DocumentDefault]:
    """accelerate's fp32 (``mixed_precision`` ``no``), located at the first flag the launch
    line gives the script (where a user adds ``--mixed_precision``). Every example script
    leaves it to accelerate (``default=None``) or says ``"no"``; their seeds and worker counts
    differ from script to script (``train_custom_diffusion.py`` seeds 42 and loads with 2
    workers, the cosmos script with 4), so those are left to the script's own definitions."""
    if not facts:
        return []
    return [DocumentDefault("/training/precision", "fp32", "mixed_precision", facts[0].location)]


recognise = no_file  # configured on the command line only
parse = flags_only(name)


def keys() -> dict[str, list[str]]:
    """Every flag this format reads → the job-model pointers it sets (docs/formats.md)."""
    return flag_keys(FLAGS)


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=(
        "train_dreambooth_lora_sdxl.py --train_batch_size 1 ... (flags on a launch line)",
        "train_text_to_image.py --mixed_precision fp16 ...",
    ),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
    flags=Flags(cli_facts, entrypoints=ENTRYPOINTS, defaults=cli_defaults),
)
