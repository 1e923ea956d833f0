"""SLURM options, from ``#SBATCH`` header comments and ``srun`` command lines.

One option table serves both; ``resource_facts`` maps options to job-model facts (GPUs per
node and model, nodes, time limit, cost tags), each located at the option that set it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from trainlint.job import Location
from trainlint.sources.base import Fact
from trainlint.sources.base import normalize as n
from trainlint.sources.shell import ScriptComment, Word

# Short options that take a value, by their long name (shared by sbatch and srun).
SHORT = {
    "A": "account", "a": "array", "b": "begin", "C": "constraint", "c": "cpus-per-task",
    "D": "chdir", "d": "dependency", "e": "error", "F": "nodefile", "G": "gpus", "i": "input",
    "J": "job-name", "L": "licenses", "M": "clusters", "m": "distribution", "N": "nodes",
    "n": "ntasks", "o": "output", "p": "partition", "q": "qos", "t": "time", "w": "nodelist",
    "x": "exclude", "r": "relative", "T": "threads",
}  # fmt: skip
# Long options that never take a separate value (optional arguments attach with "=").
LONG_FLAGS = frozenset({
    "exclusive", "kill-on-bad-exit", "overlap", "pty", "label", "unbuffered", "no-kill",
    "oversubscribe", "overcommit", "quiet", "verbose", "hold", "immediate", "multi-prog",
    "no-allocate", "contiguous", "spread-job", "test-only", "disable-status", "exact", "whole",
    "preserve-env", "propagate", "requeue", "no-requeue", "reboot", "use-min-nodes",
    "wait-all-nodes",
    "container-remap-root", "no-container-remap-root", "container-mount-home",
    "no-container-mount-home", "container-writable", "container-readonly", "parsable",
    "no-container-entrypoint", "container-entrypoint", "container-entrypoint-log", "x11",
    "send-libs", "get-user-env", "help", "usage", "version", "ignore-pbs", "bcast", "mem-per-cpu-0",
})  # fmt: skip


@dataclass(frozen=True)
class SlurmOption:
    """One SLURM option with its value (None when unknown or a flag) and position."""

    name: str
    value: str | None
    line: int
    column: int


_TOKEN = re.compile(r"""(?:[^\s"']|"[^"]*"|'[^']*')+""")


def header_options(comments: Sequence[ScriptComment]) -> list[SlurmOption]:
    """Options of every top-level ``#SBATCH`` comment (trailing ``# ...`` ignored)."""
    options: list[SlurmOption] = []
    for comment in comments:
        text = comment.text
        if not comment.top_level or not re.match(r"#SBATCH(\s|$)", text):
            continue
        words = []
        for match in _TOKEN.finditer(text, 7):
            if match.group(0).startswith("#"):
                break
            token = re.sub(r"""["']""", "", match.group(0))
            words.append(Word(token, match.group(0), comment.line, comment.column + match.start()))
        options.extend(parse_options(words, srun=False)[0])
    return options


def parse_options(words: Sequence[Word], srun: bool) -> tuple[list[SlurmOption], int]:
    """Leading options of ``words`` and the index of the first word that is not one."""
    options: list[SlurmOption] = []
    index = 0
    while index < len(words):
        word, text = words[index], words[index].text
        following = words[index + 1] if index + 1 < len(words) else None
        if text is None:  # an unknown word (e.g. "$SRUN_ARGS"): options of unknown value
            index += 1
            continue
        if text == "--":
            return options, index + 1
        if not text.startswith("-") or text == "-":
            break
        name, value, used = _option(text, following, srun)
        options.append(SlurmOption(name, value, word.line, word.column))
        index += 1 + used
    return options, index


def _option(text: str, following: Word | None, srun: bool) -> tuple[str, str | None, int]:
    """(long name, value, words consumed after this one) for one option word."""
    if text.startswith("--"):
        name, eq, value = text[2:].partition("=")
        if eq or name in LONG_FLAGS:
            return name, value if eq else None, 0
        return name, following.text if following else None, 1 if following else 0
    letter, attached = text[1:2], text[2:]
    long_name = SHORT.get(letter) or ("wait" if srun and letter == "W" else None)
    if long_name is None:
        return letter, None, 0
    if attached:
        return long_name, attached.removeprefix("="), 0
    return long_name, following.text if following else None, 1 if following else 0


@dataclass
class _Context:
    file: str
    nodes: int | None
    tasks_per_node: int | None
    tasks_unknown: bool = False  # --ntasks[-per-node]=$VAR: a per-task count is then unknown

    def fact(self, pointer: str, value: object, option: SlurmOption) -> Fact:
        location = Location(file=self.file, line=option.line, column=option.column)
        return Fact(pointer, value, location)


def resource_facts(options: Sequence[SlurmOption], file: str) -> list[Fact]:
    """Job-model facts for SLURM options, in option order."""
    tasks = _tasks_per_node(options)
    written = any(o.name in ("ntasks", "ntasks-per-node") and o.value for o in options)
    context = _Context(file, _last(options, "nodes", _count), tasks, tasks is None and written)
    facts: list[Fact] = []
    for option in options:
        handler = _HANDLERS.get(option.name)
        if handler is not None and option.value is not None:
            facts.extend(handler(option, context))
    return facts


def environment(facts: Sequence[Fact], options: Sequence[SlurmOption]) -> dict[str, str | None]:
    """The ``SLURM_*`` variables an allocation with these options is known to set."""
    values = {f.pointer: f.value for f in facts}
    env: dict[str, str | None] = {}
    nodes, gpus = values.get("/resources/nodes"), values.get("/resources/gpus_per_node")
    for name, value in (("SLURM_NNODES", nodes), ("SLURM_JOB_NUM_NODES", nodes),
                        ("SLURM_GPUS_ON_NODE", gpus), ("SLURM_GPUS_PER_NODE", gpus)):  # fmt: skip
        if value is not None:
            env[name] = str(value)
    tasks = _tasks_per_node(options)
    if tasks is not None:
        env["SLURM_NTASKS_PER_NODE"] = str(tasks)
    return env


def _last(
    options: Sequence[SlurmOption], name: str, convert: Callable[[str], int | None]
) -> int | None:
    found = [convert(o.value) for o in options if o.name == name and o.value is not None]
    return found[-1] if found else None


def _count(text: str) -> int | None:
    """``2`` or a ``min-max`` range (the maximum is what may be allocated)."""
    number = n.to_int(text.rsplit("-", 1)[-1])
    return number if number is not None and number > 0 else None


def _tasks_per_node(options: Sequence[SlurmOption]) -> int | None:
    """--ntasks-per-node, or --ntasks spread evenly over --nodes (one node without -N, as
    for --gpus; a --nodes of unknown value leaves it unknown)."""
    per_node = _last(options, "ntasks-per-node", _count)
    tasks, nodes = _last(options, "ntasks", _count), _last(options, "nodes", _count)
    nodes_written = any(o.name == "nodes" and o.value for o in options)
    if per_node is None and tasks and not nodes_written:
        return tasks
    if per_node is None and tasks and nodes and tasks % nodes == 0:
        return tasks // nodes
    return per_node


# A value left for the user to fill in (``your_own_gpu_per_node``, ``<gpus>``, ``CHANGEME``).
_PLACEHOLDER = re.compile(r"(?i)(?:^|_)your(?:_|$)|_own_|placeholder|changeme|[<>{}]")


def gpu_request(value: str, gres: bool) -> tuple[str | None, int | None]:
    """(type, count) of ``gpu:a100:8`` (gres) or ``a100:8`` / ``8`` (--gpus* options)."""
    for item in value.split(","):
        parts = re.sub(r"\(.*\)$", "", item.strip()).split(":")
        if gres:
            if parts[0].lower() != "gpu":
                continue
            parts = parts[1:]
        if not parts or not parts[-1].isdigit():
            kind = parts[0] if parts and parts[0] else None
            if kind is not None and _PLACEHOLDER.search(kind):
                return None, None  # ``gpu:your_own_gpu_per_node``: a template's blank
            return kind, (1 if gres else None)
        count = int(parts[-1])
        return (parts[0] if len(parts) > 1 else None), (count if count > 0 else None)
    return None, None


def gpu_facts(kind: str | None, option: SlurmOption, context: _Context) -> list[Fact]:
    """GPU model and memory for a type name the catalog knows (``a100``, ``volta32gb``)."""
    from trainlint.catalog import resolve_gpu

    spec = resolve_gpu(kind) if kind else None
    if spec is None:
        return []
    return [
        context.fact("/resources/gpu/model", spec.name, option),
        context.fact("/resources/gpu/memory_bytes", spec.memory_bytes, option),
    ]


def _per_node(per: str) -> Callable[[SlurmOption, _Context], list[Fact]]:
    """A GPU request counted per ``node`` (gres, --gpus-per-node), ``task`` or ``job``."""

    def handler(option: SlurmOption, context: _Context) -> list[Fact]:
        kind, count = gpu_request(option.value or "", gres=option.name == "gres")
        facts = gpu_facts(kind, option, context)
        if count is not None and per == "task":
            count = None if context.tasks_unknown else count * (context.tasks_per_node or 1)
        elif count is not None and per == "job":
            nodes = context.nodes or 1  # without --nodes, sbatch allocates one node
            count = count // nodes if count % nodes == 0 else None
        if count is not None:
            facts.insert(0, context.fact("/resources/gpus_per_node", count, option))
        return facts

    return handler


def time_seconds(text: str) -> float | None:
    """SLURM ``--time``: a bare number is minutes; the clock forms (MM:SS, HH:MM:SS, D-HH,
    D-HH:MM, D-HH:MM:SS) are the shared duration table's (0 = no limit)."""
    text = text.strip()
    if text.isdigit():
        return float(int(text) * 60) or None
    clock = (":" in text or "-" in text) and text.count(":") <= 2
    return n.duration_seconds(text) if clock else None


def _time(option: SlurmOption, context: _Context) -> list[Fact]:
    seconds = time_seconds(option.value or "")
    return [] if seconds is None else [context.fact("/resources/time_limit_s", seconds, option)]


def _nodes(option: SlurmOption, context: _Context) -> list[Fact]:
    count = _count(option.value or "")
    return [] if count is None else [context.fact("/resources/nodes", count, option)]


def tag_pointer(key: str) -> str:
    """``/tags/<key>`` with the key normalised and JSON-pointer escaped."""
    return "/tags/" + n.tag_key(key).replace("~", "~0").replace("/", "~1")


def _tag(key: str, *, placed: bool = False) -> Callable[[SlurmOption, _Context], list[Fact]]:
    """The option's value as the tag ``key``; ``placed``: also where the job is placed
    (``/resources/placement/<key>``), which the org fleet's pools match."""

    def handler(option: SlurmOption, context: _Context) -> list[Fact]:
        value = (option.value or "").strip()
        if not value:
            return []
        facts = [context.fact(tag_pointer(key), value, option)]
        if placed:
            facts.append(context.fact(f"/resources/placement/{key}", value, option))
        return facts

    return handler


def _comment(option: SlurmOption, context: _Context) -> list[Fact]:
    """``--comment="team=nlp,project=llm"`` gives one tag per pair; other text one tag."""
    pieces = [p for p in re.split(r"[\s,;]+", (option.value or "").strip()) if p]
    pairs = [p.partition("=") for p in pieces]
    if pairs and all(eq and key for key, eq, _ in pairs):
        return [context.fact(tag_pointer(k), v, option) for k, _, v in pairs]
    return _tag("comment")(option, context)


def _name(option: SlurmOption, context: _Context) -> list[Fact]:
    value = (option.value or "").strip()
    return [context.fact("/name", value, option)] if value else []


def _constraint(option: SlurmOption, context: _Context) -> list[Fact]:
    """``--constraint=volta32gb`` (or ``a100&ib``) names the GPU when exactly one feature does;
    the expression as written is where the job is placed, for the org fleet's pools."""
    from trainlint.catalog import resolve_gpu

    value = (option.value or "").strip()
    if not value:
        return []
    placed = [context.fact("/resources/placement/constraint", value, option)]
    if "|" in value:
        return placed
    features = [f.split("*")[0] for f in re.split(r"[&,\[\]()]+", value) if f]
    names = {spec.name for f in features if (spec := resolve_gpu(f))}
    return placed + (gpu_facts(names.pop(), option, context) if len(names) == 1 else [])


_HANDLERS: dict[str, Callable[[SlurmOption, _Context], list[Fact]]] = {
    "nodes": _nodes,
    "gres": _per_node("node"),
    "gpus-per-node": _per_node("node"),
    "gpus-per-task": _per_node("task"),
    "gpus": _per_node("job"),
    "time": _time,
    "account": _tag("account", placed=True),
    "partition": _tag("partition", placed=True),
    "qos": _tag("qos", placed=True),
    "wckey": _tag("wckey"),
    "comment": _comment,
    "job-name": _name,
    "constraint": _constraint,
}
