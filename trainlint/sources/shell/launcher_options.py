"""Option tables of the training launchers (torchrun, deepspeed, accelerate, mpirun) and the
parser that finds where a launcher's own options end and the training script begins.

Knowing which options take a value is what finds the entry script correctly:
``torchrun --nnodes 2 --standalone train.py`` has one value option and one flag.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from trainlint.job import Location
from trainlint.sources.base import Fact, Reference, Role
from trainlint.sources.base import normalize as n
from trainlint.sources.shell import Word


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Spec:
    """A launcher's options: which take a value, which are flags, which mark a module entry."""

    kind: str
    values: frozenset[str]
    flags: frozenset[str]
    value_by_default: bool = False
    module_flags: frozenset[str] = frozenset()

    def known(self, option: str) -> bool:
        return n.flag_key(option) in self.values or n.flag_key(option) in self.flags

    def takes_value(self, name: str) -> bool:
        return name in self.values or (self.value_by_default and name not in self.flags)


TORCHRUN = Spec(
    "torchrun",
    values=_names(
        "nproc_per_node nnodes node_rank master_addr master_port rdzv_id rdzv_backend "
        "rdzv_endpoint rdzv_conf max_restarts monitor_interval start_method role log_dir "
        "redirects r tee t local_addr logs_specs local_ranks_filter numa_binding "
        "event_log_handler signals_to_handle duplicate_stdout_filters duplicate_stderr_filters"
    ),
    flags=_names("standalone no_python run_path module m use_env virtual_local_rank"),
    module_flags=_names("module m"),
)
DEEPSPEED = Spec(
    "deepspeed",
    values=_names(
        "hostfile H include i exclude e num_nodes min_elastic_nodes max_elastic_nodes num_gpus "
        "num_accelerators master_port master_addr node_rank launcher launcher_args "
        "enable_each_rank_log autotuning bind_core_list ssh_port comment venv_script"
    ),
    flags=_names(
        "module no_python no_local_rank no_ssh no_ssh_check force_multi save_pid "
        "elastic_training bind_cores_to_rank"
    ),
    module_flags=_names("module"),
)
# accelerate launch: nearly every option takes a value, so list the flags instead.
ACCELERATE = Spec(
    "accelerate",
    values=frozenset(),
    flags=_names(
        "cpu multi_gpu tpu ipex use_xpu quiet q enable_cpu_affinity dynamo_use_fullgraph "
        "dynamo_use_dynamic dynamo_use_regional_compilation use_deepspeed use_fsdp "
        "use_megatron_lm same_network module m no_python tpu_cluster no_tpu_cluster "
        "tpu_use_sudo downcast_bf16 debug"
    ),
    value_by_default=True,
    module_flags=_names("module m"),
)
MPIRUN = Spec(
    "mpirun",
    values=_names(
        "n np c N npernode ppn hostfile machinefile f H host hosts x map_by bind_to wdir prefix "
        "rankfile rf output_filename genvlist mca gmca genv env"
    ),
    flags=frozenset(),
)
# Composer's launcher (composer/cli/launcher.py): ``composer -n 8 train.py cfg.yaml``.
COMPOSER = Spec(
    "composer",
    values=_names("n nproc world_size base_rank node_rank master_addr master_port stdout stderr"),
    flags=_names("v verbose m module_mode c command_mode version"),
    module_flags=_names("m module_mode"),
)
_TWO_VALUES = _names("mca gmca genv env")


@dataclass(frozen=True)
class LauncherOption:
    """A launcher's option (torchrun, deepspeed, accelerate, mpirun) as shell words: ``value``
    is None for a flag (or an unknown value). ``slurm.SlurmOption`` is SLURM's, from a header
    line or an srun word, kept as text."""

    name: str
    value: Word | None
    word: Word


@dataclass
class Parsed:
    options: list[LauncherOption] = field(default_factory=list)
    entry: int | None = None
    module: bool = False


_RAW_OPTION = re.compile(r"(--?[A-Za-z][\w-]*)=")


def parse(words: Sequence[Word], spec: Spec) -> Parsed:
    """The launcher options at the head of ``words`` and the index of the entry script."""
    parsed = Parsed()
    index = 0
    while index < len(words):
        word, text = words[index], words[index].text
        if text is None and (attached := _RAW_OPTION.match(word.raw)):  # --x=$(...)
            parsed.options.append(LauncherOption(n.flag_key(attached.group(1)), None, word))
            index += 1
            continue
        if text is None and _opaque(words, index, spec):
            index += 1
            continue
        if text == "--":
            index += 1
            break
        if text is None or not text.startswith("-") or text == "-":
            break
        index += 1 + _option(word, words[index + 1 : index + 3], spec, parsed)
    if index < len(words):
        parsed.entry = index
    return parsed


def _option(word: Word, following: Sequence[Word], spec: Spec, parsed: Parsed) -> int:
    """Record one option; the number of following words it consumed."""
    text = word.text or ""
    name, eq, value = text.partition("=")
    name = n.flag_key(name)
    if name in spec.module_flags:
        parsed.module = True
    if eq:
        parsed.options.append(
            LauncherOption(name, Word(value, word.raw, word.line, word.column), word)
        )
        return 0
    if not spec.takes_value(name) or not following:
        parsed.options.append(LauncherOption(name, None, word))
        return 0
    parsed.options.append(LauncherOption(name, following[0], word))
    return 2 if name in _TWO_VALUES and len(following) > 1 else 1


def _opaque(words: Sequence[Word], index: int, spec: Spec) -> bool:
    """Whether an unknown word (``$ARGS``) is more launcher options rather than the script:
    true when a launcher option or a ``.py`` script follows it."""
    if index + 1 >= len(words):
        return False
    following = words[index + 1].text
    if following is None:
        return True
    return following.endswith(".py") or (following.startswith("-") and spec.known(following))


def _positive(word: Word | None) -> int | None:
    number = n.to_int(word.text) if word is not None and word.text is not None else None
    return number if number is not None and number > 0 else None


FactMaker = Callable[[Sequence[LauncherOption], str], list[Fact]]


def _at(file: str, word: Word) -> Location:
    return Location(file=file, line=word.line, column=word.column)


def torchrun_facts(options: Sequence[LauncherOption], file: str) -> list[Fact]:
    facts = []
    for option in options:
        location = _at(file, option.word)
        if option.name == "nproc_per_node" and (count := _positive(option.value)):
            facts.append(Fact("/resources/gpus_per_node", count, location))
        elif option.name == "nnodes" and option.value is not None and option.value.text:
            maximum = option.value.text.rsplit(":", 1)[-1]
            nodes = _positive(Word(maximum, "", 0, 0))
            if nodes:
                facts.append(Fact("/resources/nodes", nodes, location))
        elif option.name == "nnodes":
            facts += _unknown_nodes(option, location)
        elif option.name == "standalone":
            facts.append(Fact("/resources/nodes", 1, location))
    return facts


def _unknown_nodes(option: LauncherOption, location: Location) -> list[Fact]:
    """``--nnodes $NNODES``: the node count is stated but its value is unknown here (set
    outside the script, by the scheduler): a fact of value None, so that no one-node default
    turns the GPUs per node into a world size."""
    if option.value is not None and option.value.text is not None:
        return []  # a literal that is no count
    return [Fact("/resources/nodes", None, location)]  # ``--nnodes=$(...)``: no value word


def deepspeed_facts(options: Sequence[LauncherOption], file: str) -> list[Fact]:
    facts = []
    for option in options:
        location = _at(file, option.word)
        if option.name in ("num_gpus", "num_accelerators") and (count := _positive(option.value)):
            facts.append(Fact("/resources/gpus_per_node", count, location))
        elif option.name == "num_nodes" and (nodes := _positive(option.value)):
            facts.append(Fact("/resources/nodes", nodes, location))
        elif option.name == "num_nodes":
            facts += _unknown_nodes(option, location)
        elif option.name in ("include", "i") and (slots := _included_slots(option.value)):
            facts.append(Fact("/resources/gpus_per_node", slots, location))
    return facts


def _included_slots(word: Word | None) -> int | None:
    """``--include localhost:0,1,2,3`` (one host): the number of GPUs it selects."""
    text = word.text if word is not None else None
    if not text or "@" in text or text.count(":") != 1:
        return None
    slots = [s for s in text.split(":")[1].split(",") if s.strip().isdigit()]
    return len(slots) or None


_ACCELERATE_STRATEGY = {"use_deepspeed": "deepspeed", "use_fsdp": "fsdp"}


def accelerate_facts(options: Sequence[LauncherOption], file: str) -> list[Fact]:
    facts = []
    last = {option.name: option for option in options}
    for option in options:
        location = _at(file, option.word)
        if option.name == "num_processes" and (count := _positive(option.value)):
            facts.append(Fact("/resources/world_size", count, location))
        elif option.name == "num_machines" and (machines := _positive(option.value)):
            facts.append(Fact("/resources/nodes", machines, location))
        elif option.name == "num_machines":
            facts += _unknown_nodes(option, location)
        elif option.name == "mixed_precision" and option.value and option.value.text:
            precision = n.precision(option.value.text)
            if precision:
                facts.append(Fact("/training/precision", precision, location))
        elif option.name in _ACCELERATE_STRATEGY:
            strategy = _ACCELERATE_STRATEGY[option.name]
            facts.append(Fact("/training/parallelism/strategy", strategy, location))
        elif (
            option.name == "zero_stage"
            and option.value
            and option.value.text in ("0", "1", "2", "3")
        ):
            facts.append(Fact("/training/parallelism/zero_stage", int(option.value.text), location))
    processes = _positive(last["num_processes"].value) if "num_processes" in last else None
    machines = _positive(last["num_machines"].value) if "num_machines" in last else None
    if processes and machines and processes % machines == 0:
        location = _at(file, last["num_processes"].word)
        facts.append(Fact("/resources/gpus_per_node", processes // machines, location))
    return facts


def mpirun_facts(options: Sequence[LauncherOption], file: str) -> list[Fact]:
    """Process counts of ``mpirun -n N -npernode G python …`` (one process per GPU)."""
    facts = []
    for option in options:
        location = _at(file, option.word)
        if option.name in ("n", "np", "c") and (count := _positive(option.value)):
            facts.append(Fact("/resources/world_size", count, location))
        elif option.name in ("npernode", "ppn", "N") and (per := _positive(option.value)):
            facts.append(Fact("/resources/gpus_per_node", per, location))
        elif option.name in ("host", "H") and (hosts := _hosts(option.value)):
            facts.append(Fact("/resources/nodes", hosts, location))
    return facts


def _hosts(value: Word | None) -> int | None:
    """``--host h1:8,h2:8``: the number of distinct hosts the ranks run on."""
    if value is None or not value.text:
        return None
    names = {entry.partition(":")[0] for entry in value.text.split(",") if entry.strip()}
    return len(names) if names and all(names) else None


_REFERENCE_OPTIONS: dict[str, Role] = {
    "config_file": "config",
    "deepspeed_config_file": "deepspeed",
}


def launcher_references(options: Sequence[LauncherOption], file: str) -> list[Reference]:
    """``accelerate launch --config_file a.yaml`` / ``--deepspeed_config_file ds.json``."""
    references = []
    for option in options:
        role = _REFERENCE_OPTIONS.get(option.name)
        if role and option.value is not None and option.value.text:
            references.append(Reference(option.value.text, _at(file, option.word), role))
    return references


def composer_facts(options: Sequence[LauncherOption], file: str) -> list[Fact]:
    """``-n/--nproc`` processes on this node (one per GPU), ``--world_size`` in all."""
    facts = []
    for option in options:
        location = _at(file, option.word)
        if option.name in ("n", "nproc") and (count := _positive(option.value)):
            facts.append(Fact("/resources/gpus_per_node", count, location))
        elif option.name == "world_size" and (count := _positive(option.value)):
            facts.append(Fact("/resources/world_size", count, location))
    return facts


FACTS: dict[str, FactMaker] = {
    "torchrun": torchrun_facts,
    "deepspeed": deepspeed_facts,
    "accelerate": accelerate_facts,
    "mpirun": mpirun_facts,
    "composer": composer_facts,
}
