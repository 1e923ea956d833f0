"""The format registry: a checked discovery of the modules of trainlint/sources/ (each declares
one ``Format``, helpers live in sub-packages), and what it answers for the launch line and for
recognition conflicts."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import trainlint.sources
from trainlint.errors import SourceError
from trainlint.job import Location
from trainlint.sources import (
    all_sources,
    claimed_by_others,
    flag_readers,
    hf_trainer,
    megatron,
    read_document,
    registered,
)
from trainlint.sources.base import Document, Input, Override
from trainlint.sources.base import table as table_module
from trainlint.sources.base.format import Flags, Format

HERE = Location(file="run.sh", line=2, column=5)
PACKAGE = trainlint.sources.__path__


def _modules(path: list[str], prefix: str) -> list[pkgutil.ModuleInfo]:
    return sorted(pkgutil.iter_modules(path, prefix), key=lambda info: info.name)


def test_every_module_of_the_folder_declares_exactly_one_format() -> None:
    for info in _modules(PACKAGE, "trainlint.sources."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        declared = [value for value in vars(module).values() if isinstance(value, Format)]
        assert declared == [module.FORMAT], info.name


def test_sub_packages_hold_helpers_only() -> None:
    helpers = [info for info in pkgutil.walk_packages(PACKAGE, "trainlint.sources.") if "." in
               info.name.removeprefix("trainlint.sources.")]  # fmt: skip
    assert helpers
    for info in helpers:
        module = importlib.import_module(info.name)
        assert not isinstance(vars(module).get("FORMAT"), Format), info.name


def test_a_module_without_a_format_is_refused() -> None:
    with pytest.raises(TypeError, match="declares no FORMAT"):
        registered(table_module)


def test_formats_come_in_module_name_order_with_unique_names() -> None:
    modules = [info.name for info in _modules(PACKAGE, "") if not info.ispkg]
    formats = all_sources()
    assert len(formats) == len(modules)
    assert [importlib.import_module(f"trainlint.sources.{m}").FORMAT for m in modules] == list(
        formats
    )
    assert len({fmt.name for fmt in formats}) == len(formats)


def test_every_program_s_flags_are_read_by_hf_then_megatron() -> None:
    assert flag_readers("train.py") == (hf_trainer.FORMAT.flags, megatron.FORMAT.flags)
    assert flag_readers(None) == flag_readers("pretrain_gpt.py")


def test_a_reader_naming_its_entry_points_reads_only_theirs() -> None:
    flags = Flags(megatron.cli_facts, entrypoints=re.compile(r"espnet2\.bin\.\w+_train"))
    assert flags.reads_flags_of("espnet2.bin.asr_train")
    assert not flags.reads_flags_of("train.py")
    assert not flags.reads_flags_of(None)


def test_hf_yields_to_the_keys_other_formats_claim() -> None:
    assert claimed_by_others("hf-trainer") == {
        "base_model", "micro_batch_size", "sequence_len", "adapter", "datasets",
        "saves_per_epoch", "stage", "finetuning_type", "cutoff_len", "template",
        "distributed_type", "compute_environment",
        "train_loader", "fsdp_config", "eval_loader", "icl_tasks", "eval_gauntlet",
    }  # fmt: skip
    text = "per_device_train_batch_size: 4\nsave_steps: 10\nlogging_steps: 5\ntemplate: llama3\n"
    assert hf_trainer.recognise(Input("sft.yaml", text)) == 0.3


def test_overrides_read_the_table_unless_the_format_reads_them_itself() -> None:
    by_name = {fmt.name: fmt for fmt in all_sources()}
    batch = Override("batch_size", "8", HERE)
    assert [(f.pointer, f.value) for f in by_name["torchtune"].override_facts(batch)] == [
        ("/training/micro_batch_size", 8)
    ]
    devices = Override("trainer.devices", "2", HERE)
    assert by_name["lightning"].override_facts(devices)
    assert by_name["hf-trainer"].override_facts(batch) == []


def test_megatron_reads_no_file_and_a_forced_file_is_broken() -> None:
    assert megatron.recognise(Input("pretrain.sh", "--micro-batch-size 1\n")) == 0.0
    with pytest.raises(SourceError):
        megatron.parse(Input("args.txt", "--micro-batch-size 1\n"))
    doc = read_document(Input("args.txt", "--micro-batch-size 1\n"), forced="megatron-lm")
    assert isinstance(doc, Document)
    assert [error.message for error in doc.errors] == [
        "megatron-lm has no config file: its settings are a launch line's flags"
    ]
