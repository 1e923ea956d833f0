"""Launch scripts (bash): ``#SBATCH`` headers, exported environment, and the training launch.

The script is read statically (``shell``): variables are substituted where the script states
them, nothing is executed. Facts come from SLURM headers (GPUs, nodes, time limit, cost tags),
from ``export``s and command-prefix assignments (``/env``, secrets redacted), and from the one
command that launches training (``launchers``): its launcher options and the training script's
flags (``--save_steps 10``), each read by the first format that knows it among those the
registry says read the flags of that entry point (``flag_readers``), with references to the
configs it names and those formats' defaults for what the flags leave unset.
"""

from __future__ import annotations

import itertools
import math
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from trainlint.discover import checked_roots
from trainlint.errors import SourceError
from trainlint.job import Location
from trainlint.sources import all_sources, flag_readers, shell
from trainlint.sources.base import (
    Document,
    DocumentDefault,
    Fact,
    Input,
    Override,
    Reference,
    Role,
    UnsupportedWorkload,
    consulted,
    purpose,
)
from trainlint.sources.base import normalize as n
from trainlint.sources.base.format import Flags, Format
from trainlint.sources.base.redact import redact_text, redact_value
from trainlint.sources.shell import Assignment, Command, Script, Word, launchers, slurm
from trainlint.sources.shell.launchers import Launch, location
from trainlint.sources.structured import MAX_BYTES, check_size
from trainlint.sources.structured.hydra_defaults import repository_text

name = "launch-script"
role: Role = "entrypoint"

_SUFFIXES = frozenset({"sh", "bash", "slurm", "sbatch"})
_SHEBANG = re.compile(r"#!\s*(?:\S*/)?(?:env\s+(?:-\S+\s+)*)?(?:ba|z|k|da)?sh(?:\s|$)")
_HINT = re.compile(
    r"^#SBATCH|\b(?:torchrun|deepspeed|accelerate\s+launch|srun|mpirun|mpiexec|python[0-9.]*)\b",
    re.MULTILINE,
)


def recognise(file: Input) -> float:
    """0.9 for a shell script that launches something or has ``#SBATCH``, 0.4 for another."""
    first_line = file.text[:256].split("\n", 1)[0]
    if file.suffix not in _SUFFIXES and not _SHEBANG.match(first_line):
        return 0.0
    return 0.9 if _HINT.search(file.text[:MAX_BYTES]) else 0.4


def parse(file: Input) -> Document:
    """Facts of the headers, the environment and the best launch; SourceError only when no
    statement at all could be read."""
    check_size(file.text)
    # SLURM_* variables are the scheduler's: a script that reads them (``${SLURM_NNODES:-1}``)
    # expects an allocation, so their defaults are not their values.
    prefixes = ("SLURM_",)
    script = shell.parse_script(file.text, {}, prefixes)
    # Its own #SBATCH headers, else those of the script it submits with ``sbatch <<EOF``.
    headers = slurm.header_options(script.leading_comments()) or slurm.header_options(
        script.batch_headers
    )
    header_facts = slurm.resource_facts(headers, file.path)
    environ: dict[str, str | None] = {}
    if headers or _uses_srun(script):  # the allocation's own SLURM_* values are known
        environ = slurm.environment(header_facts, headers)
        script = shell.parse_script(file.text, environ, prefixes)
    if script.error and not (script.commands or script.assignments or headers):
        raise SourceError("shell syntax error: no command could be read", *script.error)
    launch, source = _launch_source(script, file, environ, prefixes)
    doc = Document(file.path, name, recognise(file), role)
    if launch is not None and launch.purpose is not None:
        doc.purpose = _not_training(launch)
        launch = None
    elif launch is None or (launch.rank < 3 and not _LAUNCHER_TEXT.search(source.text)):
        doc.purpose = _named_purpose(file.text)
        launch = None if doc.purpose else launch
    if launch is None and doc.purpose is None and (name_says := purpose.file_purpose(file.path)):
        doc.purpose = f"named for {name_says}, not training"
    if launch is None and doc.purpose is None:
        doc.workload = _unread_launch(file)
    named = bool(_LAUNCHER_TEXT.search(source.text))
    doc.launches_training = launch is not None and launchers.trains(launch, named)
    header_facts += _nodes_from_command_line(file, headers, header_facts)
    header_facts += _slurm_scheduled(file, headers, launch, source.path)
    facts = [*header_facts, *_environment(script, launch, source, file.path)]
    if launch is not None:
        facts += launch_facts(launch, header_facts, source.script, source.path)
        facts += restart_loop_facts(launch, source.script, source.path)
        doc.references = launch_references(launch, source.path)
        doc.program = entry_script(launch, source.path)
        doc.overrides = program_overrides(launch.program, source.path)
        doc.defaults = program_defaults(launch, source.path)
        facts += _forwarded_facts(doc, launch, source, file.path)
    doc.references += [_inlined(r, source) for r in script_references(script, file.path)]
    doc.references = [_generated(r, script.written) for r in doc.references]
    doc.facts = facts
    return doc


@dataclass(frozen=True)
class _Source:
    """The script whose words hold the launch: the file read, or the repository script it
    runs with arguments (``bash tools/dist_train.sh configs/x.py 8``)."""

    script: Script
    path: str
    text: str
    forwarded: tuple[Word, ...] = ()
    """The arguments the run script passes on to its launch (``${@:3}``, ``"$@"``)."""


def _launch_source(
    script: Script, file: Input, environ: dict[str, str | None], prefixes: tuple[str, ...]
) -> tuple[Launch | None, _Source]:
    """The script's own launch, else the launch of the repository script it runs."""
    own = _Source(script, file.path, file.text)
    launch = script_launch(script, file.path, environ, prefixes, file.text)
    if launch is not None:
        return launch, own
    return wrapped_launch(script, file.path, environ, prefixes) or (None, own)


_SHELLS = frozenset({"bash", "sh", "zsh"})
MAX_POSITIONAL = 9


def wrapped_launch(
    script: Script, file: str, environ: Mapping[str, str | None], prefixes: tuple[str, ...]
) -> tuple[Launch, _Source] | None:
    """``bash tools/dist_train.sh configs/x.py 8 --amp``: a script of the repository run with
    arguments, read with them as its ``$1``, ``$2``... (OpenMMLab's ``dist_train.sh``
    passes ``$1`` as the config and ``$2`` as ``--nproc_per_node``), so its launch is this
    script's, with the config it names. One level deep, read inside the repository only."""
    for command in script.commands:
        call = _script_call(command)
        shown = _repository_script(call[0], file) if call else None
        if call is None or shown is None:
            continue
        text = repository_text(Path(shown), checked_roots([Path(file).absolute()]))
        if text is None:
            continue
        positional = {str(i): word.text for i, word in enumerate(call[1][:MAX_POSITIONAL], 1)}
        inherited = _inherited(script, command)
        bound = {**environ, **inherited, "0": call[0], "#": str(len(call[1])), **positional}
        try:
            inner = shell.parse_script(text, bound, prefixes)
        except SourceError:
            continue
        if slurm.header_options(inner.leading_comments()):
            continue  # a batch script run by bash: read as the job it is (its headers)
        launch = script_launch(inner, shown, bound, prefixes, text)
        if launch is not None:
            forwarded = _forwarded(launch.command.text, text, call[1])
            return launch, _Source(inner, shown, text, forwarded)
    return None


def _inherited(script: Script, command: Command) -> dict[str, str | None]:
    """What the run script sees of this one: its exports before the command and the
    command's prefix assignments (``GPUS=16 bash tools/slurm_train.sh ...``)."""
    exported = {
        export.name: export.value
        for export in script.exports
        if not export.conditional and (export.line, export.column) < (command.line, command.column)
    }
    return exported | {assignment.name: assignment.value for assignment in command.env}


_FORWARD = re.compile(r"\$\{@:(\d+)\}|\$\{@\}|\$@|\$\*|\$\{\*\}")


_FORWARD_VARIABLE = re.compile(r"^[ \t]*(\w+)=[\"']?\$\{@:(\d+)\}", re.MULTILINE)


def _forwarded(command: str, text: str, arguments: tuple[Word, ...]) -> tuple[Word, ...]:
    """The arguments a launch passes on: ``${@:3}`` from the third, ``"$@"`` all, or through
    a variable (``PY_ARGS=${@:5}`` ... ``${PY_ARGS}``, OpenMMLab's slurm_train.sh)."""
    match = _FORWARD.search(command)
    start = (int(match.group(1)) if match.group(1) else 1) if match else None
    for variable in _FORWARD_VARIABLE.finditer(text):
        if re.search(rf"\$\{{?{variable.group(1)}\b", command):
            start = int(variable.group(2))
    return () if start is None else arguments[max(start, 1) - 1 :]


def _script_call(command: Command) -> tuple[str, tuple[Word, ...]] | None:
    """(the script, its arguments) of ``bash x.sh a b`` or ``./x.sh a b``."""
    runner = (command.name.text or "").rsplit("/", 1)[-1]
    words = command.args if runner in _SHELLS else command.words
    if runner in _SHELLS:
        words = tuple(itertools.dropwhile(lambda w: (w.text or "").startswith("-"), words))
    first = words[0].text if words else None
    if not first or not _SCRIPT_FILE.search(first):
        return None
    return first, words[1:]


def _repository_script(written: str, file: str) -> str | None:
    """The script as a path of the checked tree: from the working folder (the project root,
    where such a line is run), else beside the script that runs it."""
    for candidate in (written, posixpath.join(posixpath.dirname(file), written)):
        shown = posixpath.normpath(candidate)
        if shown != posixpath.normpath(file) and consulted.is_file(Path(shown)):
            return shown
    return None


def _forwarded_facts(doc: Document, launch: Launch, source: _Source, file: str) -> list[Fact]:
    """The run script's forwarded arguments, where this script writes them (``--amp``)."""
    if not source.forwarded:
        return []
    doc.overrides += program_overrides(source.forwarded, file)
    found, references = program_facts(source.forwarded, file, _entry(launch))
    doc.references += references
    return found


def _environment(script: Script, launch: Launch | None, source: _Source, file: str) -> list[Fact]:
    """The environment the launch sees: this script's exports, and those of the script it
    runs (with the launch's prefix assignments) at their own lines."""
    if source.script is script:
        return env_facts(script, launch, file)
    return [*env_facts(script, None, file), *env_facts(source.script, launch, source.path)]


def _inlined(reference: Reference, source: _Source) -> Reference:
    """The script whose launch was read as this one's joins the job as a member: its own
    reading, without its arguments, states nothing the job keeps."""
    if posixpath.normpath(reference.path) == source.path and reference.role == "entrypoint":
        return replace(reference, role="member")
    return reference


def _slurm_scheduled(
    file: Input, headers: Sequence[slurm.SlurmOption], launch: Launch | None, launch_file: str
) -> list[Fact]:
    """A SLURM batch script (``#SBATCH`` headers, a ``.slurm``/``.sbatch`` name) or an
    ``srun`` launch: SLURM schedules the job, and ``--time`` can bound it."""
    if headers:
        where = Location(file=file.path, line=headers[0].line, column=headers[0].column)
        return [Fact("/resources/scheduler", "slurm", where)]
    if launch is not None and (launch.command.name.text or "").rsplit("/", 1)[-1] == "srun":
        return [Fact("/resources/scheduler", "slurm", location(launch_file, launch.command.name))]
    if file.suffix in ("slurm", "sbatch"):
        return [Fact("/resources/scheduler", "slurm", Location(file=file.path, line=1, column=1))]
    return []


_NODE_COUNT_READ = re.compile(r"\$\{?SLURM_(?:NNODES|JOB_NUM_NODES)\b")


def _nodes_from_command_line(
    file: Input, headers: Sequence[slurm.SlurmOption], header_facts: Sequence[Fact]
) -> list[Fact]:
    """A batch script without ``#SBATCH --nodes`` that reads ``$SLURM_NNODES`` takes its
    node count from the ``sbatch`` command line: stated, but unknown here (no one-node
    default)."""
    if not headers or any(f.pointer == "/resources/nodes" for f in header_facts):
        return []
    match = _NODE_COUNT_READ.search(file.text)
    if match is None:
        return []
    start = match.start()
    line = file.text.count("\n", 0, start) + 1
    where = Location(file=file.path, line=line, column=start - file.text.rfind("\n", 0, start))
    return [Fact("/resources/nodes", None, where)]


def _generated(reference: Reference, written: Sequence[str]) -> Reference:
    """A config the script writes itself (``sed ... > ds_config.json``) before it launches."""
    names = {posixpath.normpath(path) for path in written}
    if posixpath.normpath(reference.path) not in names:
        return reference
    return replace(reference, unresolved="written by the script that names it, when it runs")


def _not_training(launch: Launch) -> str:
    entry = launch.entry.text if launch.entry is not None else launch.kind
    return f"runs {entry}: {launch.purpose}, not training"


# A distributed launch, and a program that is no training, anywhere in the text (a heredoc, a
# string run later by ``bash -c``): what a script runs when its commands cannot be read.
_LAUNCHER_TEXT = re.compile(
    r"\b(?:torchrun|torch\.distributed\.(?:run|launch)|accelerate[ \t]+launch|deepspeed[ \t]+"
    r"[-\w./]+\.py|ray[ \t]+job[ \t]+submit)\b"
)
_OTHER_TEXT = {
    "serving": re.compile(r"\b(?:sglang\.launch_server|vllm[ \t]+serve|vllm\.entrypoints"
                          r"|text-generation-launcher|tritonserver)\b"),
    "evaluation": re.compile(r"\b(?:lm_eval|lm-eval|lighteval)\b"),
}  # fmt: skip


def _named_purpose(text: str) -> str | None:
    """A serving or evaluation program the script's text names, when no training launch
    could be read from its commands."""
    found = next((what for what, pattern in _OTHER_TEXT.items() if pattern.search(text)), None)
    return f"runs a {found} program, not training" if found else None


# A GPU request or a distributed launch anywhere in the text (a heredoc, a string run later).
_GPU_OR_LAUNCH = re.compile(
    r"^[ \t]*#SBATCH[ \t]+(?:--gres[= ]\S*gpu|--gpus\S*[= ]\S*\d)"
    r"|\b(?:torchrun|torch\.distributed\.(?:run|launch)|accelerate[ \t]+launch)\b",
    re.MULTILINE,
)


def _unread_launch(file: Input) -> UnsupportedWorkload | None:
    """A script whose training launch trainlint cannot read (built in a variable, submitted
    through a heredoc) but whose text shows GPUs or a distributed launch."""
    match = _GPU_OR_LAUNCH.search(file.text)
    if match is None:
        return None
    start = match.start()
    line = file.text.count("\n", 0, start) + 1
    column = start - file.text.rfind("\n", 0, start)
    where = Location(file=file.path, line=line, column=column)
    kind = (
        "a launch script whose training launch trainlint cannot read (a heredoc, a command "
        "built in a variable)"
    )
    return UnsupportedWorkload(kind, where, match.group(0).strip())


def script_launch(
    script: Script,
    file: str,
    environ: Mapping[str, str | None] | None = None,
    prefixes: tuple[str, ...] = (),
    text: str = "",
) -> Launch | None:
    """The command of ``script`` that most looks like the training launch, if any (``text``:
    the script's, which may name a launcher its commands hide in a variable)."""
    inline = partial(shell.parse_inline, environ=environ, prefixes=prefixes)
    found = [launchers.analyse(command, file, inline) for command in script.commands]
    named = bool(_LAUNCHER_TEXT.search(text))
    return launchers.script_launch([launch for launch in found if launch is not None], named)


def keys() -> dict[str, list[str]]:
    """What this format reads → the job-model pointers it sets (docs/formats.md)."""
    return {
        "#SBATCH --gres / --gpus / --gpus-per-node / --gpus-per-task": [
            "/resources/gpus_per_node", "/resources/gpu/model"],
        "#SBATCH --nodes / -N": ["/resources/nodes"],
        "#SBATCH --time / -t": ["/resources/time_limit_s"],
        "#SBATCH --constraint": ["/resources/gpu/model", "/resources/placement/constraint"],
        "#SBATCH --account / -A, --partition / -p, --qos / -q": [
            "/tags/<key>", "/resources/placement/<key>"],
        "#SBATCH --comment k=v": ["/tags/<key>"],
        "#SBATCH --job-name / -J": ["/name"],
        "export NAME=value, NAME=value <command>": ["/env/NAME"],
        "torchrun / python -m torch.distributed.run --nproc_per_node, --nnodes, --standalone": [
            "/resources/gpus_per_node", "/resources/nodes"],
        "deepspeed --num_gpus, --num_nodes, --include": [
            "/resources/gpus_per_node", "/resources/nodes"],
        "accelerate launch --num_processes, --num_machines, --mixed_precision, --config_file": [
            "/resources/world_size", "/resources/nodes", "/training/precision", "(reference)"],
        "composer -n / --nproc, --world_size": [
            "/resources/gpus_per_node", "/resources/world_size"],
        "mpirun -n, -npernode, -x": ["/resources/world_size", "/resources/gpus_per_node", "/env"],
        "CUDA_VISIBLE_DEVICES": ["/resources/gpus_per_node"],
        "the launch command": ["/launcher/kind", "/launcher/entrypoint", "/launcher/command"],
        "while true / while : / until false / for ((;;)) around the launch, with no break, "
        "exit or return in it and no set -e before it": ["/launcher/restart_loop"],
        "a script fed to sbatch/bash through a heredoc (sbatch <<EOF), bash -c of a partly "
        "known string, a launch built in a heredoc (read -r -d '' CMD <<EOF; $CMD or eval), "
        "behind prefixes "
        "of unknown value ($PREFIX torchrun), under debugpy-run; an if/case the script's own "
        "values decide": ["read as the launch command"],
        "bash tools/dist_train.sh CONFIG 8 --amp (a repository script run with arguments, when "
        "the script launches nothing itself): that script's launch, read with $1, $2... bound, "
        "this script's exports and prefix assignments, and the arguments it forwards "
        "(${@:3}, \"$@\", PY_ARGS=${@:5})": ["as the launch above"],
        "flags after the entry script (--save_steps 10)": [_flag_formats()],
        "flags the entry script (in the repository) defines that no format reads": [
            "as its python argument definitions map them"],
        "--config, --config_file, --job.config_file (torchtitan), --deepspeed, "
        "positional *.yaml/*.json/*.toml, bash/srun/sbatch x.sh": [
            "(reference)"],
    }  # fmt: skip


def _flag_formats() -> str:
    """Which formats read a program's flags, in the order a launch line asks them."""
    names = [fmt.name for fmt in all_sources() if fmt.flags is not None]
    return "read by " + ", else ".join(names)


def _uses_srun(script: Script) -> bool:
    return any(
        (w.text or "").rsplit("/", 1)[-1] == "srun" for c in script.commands for w in c.words[:3]
    )


def env_facts(script: Script, launch: Launch | None, file: str) -> list[Fact]:
    """The environment the launch sees: exports made before it (not only in an if/case
    branch; an ``unset`` removes one), plus its prefix assignments
    (``NCCL_DEBUG=INFO torchrun …``)."""
    limit = (launch.command.line, launch.command.column) if launch else (math.inf, math.inf)
    current: dict[str, Assignment] = {}
    for export in script.exports:
        if not export.conditional and (export.line, export.column) < limit:
            current[export.name] = export
    assignments = [*current.values(), *(launch.env if launch is not None else [])]
    return [_env_fact(a, file) for a in assignments if a.value is not None]


def _env_fact(assignment: Assignment, file: str) -> Fact:
    where = Location(file=file, line=assignment.line, column=assignment.column)
    return Fact(f"/env/{assignment.name}", assignment.value, where)


def launch_facts(
    launch: Launch, header_facts: Sequence[Fact], script: Script, file: str
) -> list[Fact]:
    command = launch.command
    facts = [Fact("/launcher/kind", launch.kind, location(file, launch.launcher))]
    if launch.entry is not None and launch.entry.text and not launchers.opaque(launch):
        facts.append(Fact("/launcher/entrypoint", launch.entry.text, location(file, launch.entry)))
    where = Location(file=file, line=command.line, column=command.column)
    facts.append(Fact("/launcher/command", redact_text(command.text), where))
    facts += launch.facts
    declared = {fact.pointer for fact in header_facts}
    facts += [fact for fact in launch.wrapper_facts if fact.pointer not in declared]
    if not any(fact.pointer == "/resources/gpus_per_node" for fact in launch.facts):
        facts += _visible_devices(launch, script, file)
    program = program_facts(launch.program, file, _entry(launch))[0]
    return facts + [fact for fact in program if not _allocated(fact, declared)]


_ERREXIT = re.compile(r"[-+][a-zA-Z]*e[a-zA-Z]*")  # set -e, set -euo, set +e


def restart_loop_facts(launch: Launch, script: Script, file: str) -> list[Fact]:
    """``/launcher/restart_loop: "uncapped"`` at the first line of an endless loop around the
    launch (``shell.loops``): a run that crashes every time is relaunched until the allocation
    ends. Under ``set -e`` a failing launch ends the script, so the loop is capped."""
    line = launch.command.line
    loop = next((loop for loop in script.endless_loops if loop.holds(line)), None)
    if loop is None or _errexit_before(script, loop.line):
        return []
    return [
        Fact(
            "/launcher/restart_loop",
            "uncapped",
            Location(file=file, line=loop.line, column=loop.column),
        )
    ]


def _errexit_before(script: Script, line: int) -> bool:
    """Whether the last ``set -e`` / ``set -euo pipefail`` / ``set -o errexit`` before
    ``line`` is still in force (no ``set +e`` / ``set +o errexit`` after it)."""
    errexit = _shebang_errexit(script)
    for command in sorted(script.commands, key=lambda command: command.line):  # heredocs last
        if command.line < line and command.name.text == "set":
            errexit = _errexit(command, errexit)
    return errexit


def _shebang_errexit(script: Script) -> bool:
    """``#!/bin/bash -e`` (or ``-eux``, ``env -S bash -e``): errexit on from the first line."""
    shebang = next((c for c in script.comments if c.line == 1 and c.text.startswith("#!")), None)
    words = shebang.text[2:].split()[1:] if shebang else []
    return any(word[0] == "-" and _ERREXIT.fullmatch(word) for word in words)


def _errexit(command: Command, before: bool) -> bool:
    """Whether ``set`` ``command`` leaves errexit on, given it was ``before``."""
    args = [arg.text or "" for arg in command.args]
    for flag, value in itertools.pairwise(["", *args]):
        if _ERREXIT.fullmatch(value):
            before = value[0] == "-"
        elif value == "errexit" and flag in ("-o", "+o"):
            before = flag == "-o"
    return before


def _allocated(fact: Fact, declared: set[str]) -> bool:
    """A resource a ``#SBATCH`` header states is the allocation the job holds: a program's
    flag (OpenRLHF's ``--actor.num_nodes``, the actor's share of a Ray cluster) says how the
    program uses it, not what is held."""
    return fact.pointer.startswith("/resources/") and fact.pointer in declared


def launch_references(launch: Launch, file: str) -> list[Reference]:
    found = [*launch.references, *program_facts(launch.program, file, _entry(launch))[1]]
    found += _hydra_reference(launch, file)
    return [replace(r, path=redact_text(r.path)) for r in found]


def entry_script(launch: Launch, file: str) -> Reference | None:
    """The Python script the launch runs, read for its own argument definitions when it is in
    the repository (``sources.python.arguments``); its absence is no finding (an installed
    program, code not checked in)."""
    entry = launch.entry
    if entry is None or not entry.text or launch.module or not entry.text.endswith(".py"):
        return None
    if launchers.opaque(launch):
        return None
    return Reference(entry.text, location(file, entry), optional=True)


def _hydra_reference(launch: Launch, file: str) -> list[Reference]:
    """``train.py --config-path=conf --config-name=gpt`` (NeMo, Hydra apps): the primary
    config is ``<app folder>/<config-path>/<config-name>.yaml``; without ``--config-path``,
    the folder is the one the app's ``@hydra.main(config_path=...)`` names."""
    found: dict[str, tuple[str | bool, Word]] = {}
    for flag, value, word in _arguments(launch.program):
        if flag in ("--config-path", "--config_path", "--config-name", "--config_name"):
            found[flag.replace("_", "-")] = (value, word)
    path, name = found.get("--config-path"), found.get("--config-name")
    if name is None and path is None:
        return _hydra_app_default(launch, file)
    if name is None or not isinstance(name[0], str):
        return []
    folder = path[0] if path is not None and isinstance(path[0], str) else "."
    script = launch.entry.text if launch.entry is not None and launch.entry.text else ""
    app = f"{script.replace('.', '/')}.py" if launch.module else script
    base = folder if folder.startswith("/") else posixpath.join(posixpath.dirname(app), folder)
    target = name[0] if name[0].endswith((".yaml", ".yml")) else f"{name[0]}.yaml"
    written = posixpath.normpath(posixpath.join(base, target))
    reference = Reference(written, location(file, name[1]), anchor=app or None)
    stated = any(w.raw.startswith(("--config-path", "--config_path")) for w in launch.program)
    if path is None and not stated and app:  # the app's @hydra.main(config_path=) decides
        return [replace(reference, path=target, in_app_config=True)]
    if stated and (path is None or not isinstance(path[0], str)):  # --config-path="$UNKNOWN"
        return [replace(reference, path=f"<unknown>/{target}",
                        unresolved="its --config-path is a variable of unknown value")]  # fmt: skip
    return [reference]


def _hydra_app_default(launch: Launch, file: str) -> list[Reference]:
    """``python -m verl.trainer.main_ppo trainer.nnodes=2``: with no ``--config-name``, Hydra
    loads the config its ``@hydra.main(config_name=...)`` names, and the overrides change its
    values. Only value overrides (dotted keys): a group choice (``experiment=x``) recomposes
    the config in a way its plain reading would not show."""
    texts = [w.text for w in launch.program if w.text and not w.text.startswith("-")]
    overrides = [_hydra_override(t) for t in texts if "=" in t or t.startswith("~")]
    if not overrides or None in overrides or launch.entry is None or not launch.entry.text:
        return []
    script = launch.entry.text
    app = f"{script.replace('.', '/')}.py" if launch.module else script
    if not app.endswith(".py"):
        return []
    where = location(file, launch.entry)
    return [Reference("(the config_name of its @hydra.main)", where, anchor=app,
                      in_app_config=True, app_config_name=True)]  # fmt: skip


_RUNS_SCRIPT = frozenset({"bash", "sh", "zsh", "source", ".", "sbatch", "srun"})
_SCRIPT_FILE = re.compile(r"\.(?:sh|bash|slurm|sbatch)$")


def script_references(script: Script, file: str) -> list[Reference]:
    """``sbatch train.slurm``, ``srun bash run.sh``: the script run is part of this job, so
    the wrapper's headers and tags meet the inner script's launch (it launches: its facts
    rank with the wrapper's). A script it sources (``source env.sh``) lends its exports but
    not its launch: it ranks below, as a config."""
    found = []
    for command in script.commands:
        if (command.name.text or "").rsplit("/", 1)[-1] not in _RUNS_SCRIPT:
            continue
        operand = next((w for w in command.args if w.text and _SCRIPT_FILE.search(w.text)), None)
        if operand is not None and operand.text and not operand.text.startswith("-"):
            where = location(file, operand)
            runner = command.name.text or ""
            role: Role = "config" if runner in ("source", ".") else "entrypoint"
            reference = Reference(redact_text(operand.text), where, role)
            found.append(_on_path(reference, runner))
    return found


def _on_path(reference: Reference, runner: str) -> Reference:
    """``. parse_options.sh``, ``bash run.sh``: a bare name the shell also looks up on PATH,
    so a file not in the repository may well be found (Kaldi's utils on PATH)."""
    if "/" in reference.path or runner.rsplit("/", 1)[-1] in ("sbatch", "srun"):
        return reference
    return replace(reference, unresolved="a bare name the shell may find on PATH")


def _visible_devices(launch: Launch, script: Script, file: str) -> list[Fact]:
    """``CUDA_VISIBLE_DEVICES=0,1 <launcher>`` without a process count: 2 GPUs per node."""
    name_ = "CUDA_VISIBLE_DEVICES"
    prefix = [a for a in launch.env if a.name == name_]
    candidates = prefix or [a for a in script.exports if a.name == name_ and not a.conditional]
    if not candidates or not candidates[-1].value:
        return []
    chosen = candidates[-1]
    devices = [d.strip() for d in (chosen.value or "").split(",") if d.strip()]
    if not devices or any(d.startswith("-") for d in devices):
        return []
    where = Location(file=file, line=chosen.line, column=chosen.column)
    return [Fact("/resources/gpus_per_node", len(devices), where)]


_CONFIG_FILE = re.compile(r"\.(?:ya?ml|json|toml)$", re.IGNORECASE)
_REFERENCE_FLAGS: dict[str, Role] = {
    "config": "config", "config_file": "config", "configs": "config",
    "job.config_file": "config",  # torchtitan: ``-m torchtitan.train --job.config_file x.toml``
    "dataset_config": "config",  # kohya sd-scripts: ``train_network.py --dataset_config d.toml``
    "deepspeed": "deepspeed", "deepspeed_config": "deepspeed",
}  # fmt: skip


def _entry(launch: Launch) -> str | None:
    return launch.entry.text if launch.entry is not None else None


def program_facts(
    words: Sequence[Word], file: str, entrypoint: str | None = None
) -> tuple[list[Fact], list[Reference]]:
    """Facts and references of the arguments of the program ``entrypoint`` (None: unknown,
    such as a container image's own entrypoint)."""
    readers = flag_readers(entrypoint)
    facts: list[Fact] = []
    references: list[Reference] = []
    stated: dict[str, tuple[str | bool, Location]] = {}
    single_dash = any(reader.single_dash for reader in readers)
    for index, (flag, value, word) in enumerate(_arguments(words, single_dash)):
        where = location(file, word)
        if index == 0 and flag is None and isinstance(value, str):
            facts += _first_positional(readers, value, where)
        if flag is not None:
            stated[flag] = (value, where)
            facts += _flag_facts(readers, flag, value, where)
            references += _flag_reference(flag, value, where) or _key_value_reference(
                readers, n.flag_key(flag), value, where
            )
        elif isinstance(value, str) and (assigned := _key_value(readers, value)) is not None:
            stated[assigned[0]] = (assigned[1], where)
            facts += _flag_facts(readers, *assigned, where)
            references += _key_value_reference(readers, *assigned, where)
        elif isinstance(value, str) and (override := _hydra_override(value)) is not None:
            facts += _flag_facts(_hydra_apps(readers), *override, where)
        elif (
            isinstance(value, str)
            and "=" not in value
            and (_CONFIG_FILE.search(value) or re.search(r"conf.*\.py$", value, re.IGNORECASE))
        ):  # nanoGPT ``train.py config/train_gpt2.py``; not ``deepy.py train.py a.yml``, not
            # an override ``data=coco.yaml`` (its tool resolves it, maybe from a package)
            references.append(Reference(value, where, "config"))
    facts += [fact for reader in readers if reader.together for fact in reader.together(stated)]
    located = [(word.text, location(file, word)) for word in words]
    facts += [fact for reader in readers if reader.arguments for fact in reader.arguments(located)]
    return facts, references


def _first_positional(readers: Sequence[Flags], value: str, where: Location) -> list[Fact]:
    """What a program's leading positional argument means to the formats reading it."""
    readers_ = [reader.first_positional for reader in readers if reader.first_positional]
    return [fact for read in readers_ for fact in read("", value, where)]


_KEY_VALUE = re.compile(r"([A-Za-z_]\w*)=(.*)", re.DOTALL)


def _key_value(readers: Sequence[Flags], text: str) -> tuple[str, str] | None:
    """``epochs=10`` as (key, value) for a program that takes ``key=value`` arguments."""
    match = _KEY_VALUE.fullmatch(text)
    if match is None or not any(reader.key_values for reader in readers):
        return None
    return match.group(1), match.group(2)


def _key_value_reference(
    readers: Sequence[Flags], key: str, value: str | bool, where: Location
) -> list[Reference]:
    """``cfg=custom.yaml``: a config the program reads, when the file is in the repository."""
    names = any(key in reader.config_keys for reader in readers)
    if not names or not isinstance(value, str) or not value:
        return []
    return [Reference(value, where, "config", optional=True)]


_HYDRA_OVERRIDE = re.compile(r"(\+{0,2}[A-Za-z_][\w\-]*(?:\.[\w\-]+)+)=(.*)", re.DOTALL)
_HYDRA_DELETE = re.compile(r"~[A-Za-z_][\w\-]*(?:\.[\w\-]+)*(?:=.*)?", re.DOTALL)


def _hydra_override(text: str) -> tuple[str, str] | None:
    """A Hydra override of a dotted key (``trainer.save_freq=20``, ``+a.b=1``) as (key,
    value); a deletion (``~a.b``) as (``~a.b``, ""); None for any other word."""
    if _HYDRA_DELETE.fullmatch(text):
        return text.partition("=")[0], ""
    match = _HYDRA_OVERRIDE.fullmatch(text)
    return (match.group(1).lstrip("+"), match.group(2)) if match else None


def _hydra_apps(readers: Sequence[Flags]) -> tuple[Flags, ...]:
    """Only a format that names the entry point as a Hydra app reads its ``key=value``
    overrides: for any other program such a word means nothing trainlint knows."""
    return tuple(r for r in readers if r.entrypoints is not None and r.hydra_overrides)


def program_defaults(launch: Launch, file: str) -> list[DocumentDefault]:
    """The defaults of the frameworks reading the program's flags, for what its flags leave
    unset (HF: an ``--eval_steps`` without ``--eval_strategy`` does not evaluate)."""
    readers = flag_readers(_entry(launch))
    read = _read_by(readers, launch.program, file)
    return [default for i, flags in enumerate(readers) for default in flags.defaults(read[i])]


def _read_by(readers: Sequence[Flags], words: Sequence[Word], file: str) -> list[list[Fact]]:
    """The facts each reader read (a flag goes to the first that knows it): a framework's
    defaults follow its own flags, not another's (HF's "no evaluation without
    --eval_strategy" is no default of Megatron's --eval-interval)."""
    read: list[list[Fact]] = [[] for _ in readers]
    single_dash = any(reader.single_dash for reader in readers)
    for flag, value, word in _arguments(words, single_dash):
        if flag is None:
            continue
        where = location(file, word)
        for i, reader in enumerate(readers):
            if facts := reader.facts(flag, value, where):
                read[i] += facts
                break
    return read


def program_overrides(words: Sequence[Word], file: str) -> list[Override]:
    """Every ``--key value``/``--key=value``/``--flag`` and ``key=value`` argument, for the
    formats of the configs the job references to read in their own terms (LightningCLI
    ``--trainer.devices 2``, Hydra/torchtune ``trainer.devices=8``, nanoGPT ``--compile=False``)."""
    found = []
    for flag, value, word in _arguments(words):
        if flag is not None:
            found.append(_override(flag.lstrip("-"), value, location(file, word)))
        elif isinstance(value, str) and _HYDRA_DELETE.fullmatch(value):
            found.append(_override(value.partition("=")[0], "", location(file, word)))
        elif isinstance(value, str) and "=" in value and not value.startswith(("-", "+~")):
            key, _, assigned = value.partition("=")
            if re.fullmatch(r"\+{0,2}[\w.\-]+", key):
                found.append(_override(key.lstrip("+"), assigned, location(file, word)))
    return found


def _override(key: str, value: str | bool, where: Location) -> Override:
    """Secret-looking values never travel, even to a format that would ignore them."""
    safe = redact_text(redact_value(key, value)) if isinstance(value, str) else value
    return Override(key, safe, where)


def _arguments(
    words: Sequence[Word], single_dash: bool = False
) -> Iterator[tuple[str | None, str | bool, Word]]:
    """(``--flag``, its value or True, word) for options; (None, text, word) for positionals.
    ``single_dash``: ``-b 64`` is an option too, always with a value (llm.c's binary)."""
    index = 0
    while index < len(words):
        word, text = words[index], words[index].text
        index += 1
        if text is None:
            continue
        if single_dash and re.fullmatch(r"-[A-Za-z]{1,2}", text) and index < len(words):
            value_text, index = words[index].text, index + 1
            if value_text is not None:
                yield text, value_text, word
            continue
        if not (text.startswith("--") and len(text) > 2):
            if not text.startswith("-"):
                yield None, text, word
            continue
        flag, eq, attached = text.partition("=")
        value: str | bool | None = attached if eq else True
        if not eq and index < len(words) and not _is_option(words[index]):
            value, index = words[index].text, index + 1
        if value is not None:
            yield flag, value, word


def _is_option(word: Word) -> bool:
    text = word.text
    return text is not None and text.startswith("-") and not re.fullmatch(r"-[\d.]+", text)


def _flag_facts(
    readers: Sequence[Flags], flag: str, value: str | bool, where: Location
) -> list[Fact]:
    """The facts of the first reader that knows the flag."""
    return next((facts for reader in readers if (facts := reader.facts(flag, value, where))), [])


def _flag_reference(flag: str, value: str | bool, where: Location) -> list[Reference]:
    """``--config x.yaml``, ``--deepspeed ds.json`` (``--deepspeed-config`` alike)."""
    role_ = _REFERENCE_FLAGS.get(n.flag_key(flag))
    if role_ is None or not isinstance(value, str) or not value.strip() or value.startswith("{"):
        return []
    if role_ == "config" and not _CONFIG_FILE.search(value):
        return []  # a built-in config name (torchtune, Hydra), not a file
    return [Reference(value.strip(), where, role_)]


FORMAT = Format(
    name=name,
    role=role,
    doc=__doc__,
    examples=("train.sh", "launch.slurm", "submit.sbatch", "run (with a bash shebang)"),
    reads="text",
    recognise=recognise,
    parse=parse,
    keys=keys,
)
