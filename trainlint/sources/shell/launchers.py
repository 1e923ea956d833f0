"""Which command of a script launches training, through which launcher, and what it says.

A command is unwrapped (``exec``, ``nohup``, ``env A=1``, ``srun …``, ``mpirun …``,
``bash -c "…"``) down to a launcher: ``torchrun``/``python -m torch.distributed.run``,
``deepspeed``, ``accelerate launch``, Composer's ``composer``, or plain ``python``. The result
keeps the launcher's own facts apart from the wrapper's (``srun --gres``, used only where no
``#SBATCH`` header says).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from trainlint.job import Location
from trainlint.sources.base import Fact, Reference, purpose
from trainlint.sources.shell import Assignment, Command, Word, slurm
from trainlint.sources.shell import launcher_options as lo

Inline = Callable[[Word], list[Command]]


@dataclass
class Launch:
    kind: str  # torchrun, deepspeed, accelerate, python, srun, mpirun
    command: Command
    launcher: Word
    entry: Word | None
    module: bool = False
    program: list[Word] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    wrapper_facts: list[Fact] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    env: list[Assignment] = field(default_factory=list)
    rank: int = 3  # 3 distributed launcher, 2 plain python, 1 srun of another program, 0 a
    # training program of another tool (``fairseq-train``, ``yolo train``)
    purpose: str | None = None  # None for training, else what it runs: "evaluation", ...


@dataclass(frozen=True)
class _Chain:
    """What the wrappers around the launcher have contributed so far."""

    command: Command
    file: str
    inline: Inline
    env: tuple[Assignment, ...] = ()
    wrapper_facts: tuple[Fact, ...] = ()
    depth: int = 0


def analyse(command: Command, file: str, inline: Inline) -> Launch | None:
    """The launch a command performs, with its purpose when that is not training; None when
    the command launches nothing."""
    launch = _dispatch(list(command.words), _Chain(command, file, inline, command.env))
    if launch is not None and launch.purpose is None:
        launch.purpose = _purpose_of(launch)
    return launch


def best(launches: Sequence[Launch]) -> Launch | None:
    """The launch that most looks like the training run: a training one (not evaluation or
    serving), distributed first, then one whose entry says ``train``."""
    if not launches:
        return None
    ranked = [
        (launch.purpose is None, launch.rank, _trainish(launch), -i)
        for i, launch in enumerate(launches)
    ]
    return launches[ranked.index(max(ranked))]


def script_launch(launches: Sequence[Launch], launcher_in_text: bool = False) -> Launch | None:
    """The launch a script runs: its best training launch when one is certain (a
    distributed launcher, an entry named for training, or — when the script's text names a
    distributed launcher — an ``srun``/``mpirun`` of a command trainlint cannot read); else
    its evaluation, serving or other launch when it has one, so the script is no job; else
    its best plain launch."""
    training = [launch for launch in launches if launch.purpose is None]
    certain = [launch for launch in training if trains(launch, launcher_in_text)]
    other = [launch for launch in launches if launch.purpose is not None]
    return best(certain) or (other[0] if other else best(training))


def trains(launch: Launch, launcher_in_text: bool = False) -> bool:
    """A launch that certainly starts training: a distributed launcher, an entry named for
    training, another tool's training program, or an ``srun``/``mpirun`` of a command
    hidden from the reader in a script whose text names a distributed launcher."""
    if launch.purpose is not None:
        return False
    return launch.rank in (0, 3) or _trainish(launch) or (launcher_in_text and opaque(launch))


def opaque(launch: Launch) -> bool:
    """An ``srun``/``mpirun`` of a shell or of a command built at run time."""
    entry = launch.entry.text if launch.entry is not None else None
    shells = {"bash", "sh", "zsh"}
    return launch.rank == 1 and (entry is None or entry.rsplit("/", 1)[-1] in shells)


def _trainish(launch: Launch) -> bool:
    return purpose.trainish(launch.entry.text if launch.entry is not None else None)


def _purpose_of(launch: Launch) -> str | None:
    """What the launch runs when it is not training: from its entry (``eval.py``,
    ``llava.eval.model_vqa``), the subcommand of a program (``vllm serve``, ``ray start``)
    and an evaluation-only flag."""
    entry = launch.entry.text if launch.entry is not None else None
    names = [entry]
    if entry is not None and not launch.module and "." not in entry.rsplit("/", 1)[-1]:
        names += [w.text for w in launch.program[:2] if w.text and _SUBCOMMAND.fullmatch(w.text)]
    return purpose.purpose(names, [w.text for w in launch.program])


_PYTHON = re.compile(r"python[0-9.]*")


def _dispatch(words: list[Word], chain: _Chain) -> Launch | None:
    if words and words[0].text is None and chain.depth <= 8:
        return _past_unknown_prefix(words, chain)
    if not words or words[0].text is None or chain.depth > 8:
        return None
    program = words[0].text.rsplit("/", 1)[-1]
    chain = replace(chain, depth=chain.depth + 1)
    if program in _WRAPPERS:
        return _wrapper(words, chain, _WRAPPERS[program])
    handler = _HANDLERS.get(program) or (_python if _PYTHON.fullmatch(program) else None)
    return handler(words, chain) if handler else _other_program(words, chain)


# Launchers that set the process layout themselves: whatever unknown words come before one
# (``$PREFIX "${PROFILE_CMD[@]}" python -m torch.distributed.run``) can only wrap it.
_LAYOUT_LAUNCHERS = frozenset({"torchrun", "deepspeed", "accelerate"})


def _past_unknown_prefix(words: list[Word], chain: _Chain) -> Launch | None:
    """A launch line that starts with words of unknown value (a profiler or wrapper held in a
    variable): the distributed launch after them, when one follows; else nothing."""
    index = next((i for i, w in enumerate(words) if w.text is not None), len(words))
    launch = _dispatch(words[index:], chain) if index < len(words) else None
    return launch if launch is not None and launch.kind in _LAYOUT_LAUNCHERS else None


def _other_program(words: list[Word], chain: _Chain) -> Launch | None:
    """A training program of another tool (``fairseq-train``, ``yolo detect train``,
    ``./train_gpt2cu``): a launch of its own kind, below every launcher trainlint reads. The
    program or its subcommand must say it trains; anything else is no launch."""
    program = words[0].text or ""
    names = [w.text for w in words[1:3] if w.text and _SUBCOMMAND.fullmatch(w.text)]
    names += [w.text[5:] for w in words[1:4] if w.text and _MODE.fullmatch(w.text)]
    if _SUBCOMMAND.fullmatch(program.removeprefix("/")):  # ``/opt/llm.c/train_gpt2cu`` too
        names.insert(0, program)
    kind = names[0].rsplit("/", 1)[-1] if names else ""
    if not names or kind in _NOT_LAUNCHERS:
        return None
    other = purpose.purpose(names)
    if other is None and not purpose.trainish(*names):
        return None
    return Launch(kind, chain.command, words[0], words[0], program=words[1:],
                  wrapper_facts=list(chain.wrapper_facts), env=list(chain.env), rank=0,
                  purpose=other)  # fmt: skip


_SUBCOMMAND = re.compile(r"[\w.][\w./+-]*")  # a program or subcommand, not a message or option
_MODE = re.compile(r"mode=\w+")  # ``yolo task=detect mode=train``: the subcommand as a setting
# Commands whose arguments may say "train" without starting a training program.
_NOT_LAUNCHERS = frozenset({
    "echo", "printf", "cat", "cd", "ls", "mkdir", "rm", "cp", "mv", "ln", "touch", "chmod",
    "tee", "grep", "sed", "awk", "find", "xargs", "wget", "curl", "git", "pip", "pip3", "uv",
    "conda", "mamba", "module", "make", "cmake", "ninja", "docker", "podman", "tar", "unzip",
    "gsutil", "aws", "az", "gcloud", "huggingface-cli", "hf", "wandb", "sleep", "wait", "kill",
    "scontrol", "squeue", "scancel", "sbatch", "salloc", "test", "[", "tail", "head", "du",
    "wc", "sort", "jq", "yq", "rsync", "scp", "ssh", "export", "set", "unset", "read", "local",
    "declare", "readarray", "exit", "return", "trap", "kubectl", "helm", "sky", "mlflow",
})  # fmt: skip


def _debugpy_run(words: list[Word], chain: _Chain) -> Launch | None:
    """``debugpy-run -m MODULE [-p PORT] -- ARGS`` or ``debugpy-run [-p PORT] script.py --
    ARGS``: ``python -m MODULE ARGS`` / ``python script.py ARGS`` under a debugger."""
    texts = [w.text for w in words]
    if "-m" not in texts:
        return _debugpy_script(words, texts, chain)
    if "--" not in texts or texts.index("-m") + 1 >= len(words):
        return None
    module = words[texts.index("-m") + 1]
    return _python_module([words[0], module, *words[texts.index("--") + 1 :]], 1, chain)


def _debugpy_script(words: list[Word], texts: list[str | None], chain: _Chain) -> Launch | None:
    script = next((i for i, t in enumerate(texts) if t and t.endswith(".py")), None)
    if script is None or any(t is None for t in texts[1:script]):
        return None
    program = words[texts.index("--") + 1 :] if "--" in texts else words[script + 1 :]
    return _python([words[0], words[script], *program], chain)


def _ray(words: list[Word], chain: _Chain) -> Launch | None:
    """``ray job submit [options] -- <command>``: the command runs on the Ray cluster.
    ``ray start --head``/``--address``: a node joins the cluster, which is no training launch
    (on SLURM the script's training entry point, run after it, is)."""
    texts = [w.text for w in words]
    if texts[1:2] == ["start"]:
        return Launch("ray", chain.command, words[0], words[0], program=words[1:],
                      wrapper_facts=list(chain.wrapper_facts), env=list(chain.env), rank=0,
                      purpose="cluster setup")  # fmt: skip
    if texts[1:3] != ["job", "submit"] or "--" not in texts:
        return None
    return _dispatch(words[texts.index("--") + 1 :], chain)


@dataclass(frozen=True)
class _Wrap:
    """A command that runs another: its value options, positionals, ``NAME=value`` words."""

    values: frozenset[str] = frozenset()
    positionals: int = 0
    assignments: bool = False
    subcommands: frozenset[str] = frozenset()


def _w(values: str = "", positionals: int = 0, assignments: bool = False, sub: str = "") -> _Wrap:
    return _Wrap(frozenset(values.split()), positionals, assignments, frozenset(sub.split()))


_CONTAINER = _w("-B --bind --env --env-file -H --home -W --workdir -o --overlay --pwd "
                "--security --network --mount --app", positionals=1, sub="exec run")  # fmt: skip
_WRAPPERS = {
    "exec": _w("-a"), "time": _w(), "nohup": _w(), "command": _w(), "nice": _w("-n"),
    "ionice": _w("-c -n -p"), "stdbuf": _w("-i -o -e"), "taskset": _w(positionals=1),
    "numactl": _w("-N -m -C -i -p -P"), "timeout": _w("-s -k", positionals=1),
    "env": _w("-u -C -S --unset --chdir", assignments=True), "sudo": _w("-u -g -C -D -h -p -U"),
    "singularity": _CONTAINER, "apptainer": _CONTAINER,
}  # fmt: skip


def _wrapper(words: list[Word], chain: _Chain, wrap: _Wrap) -> Launch | None:
    index, env = 1, list(chain.env)
    if wrap.subcommands:
        if len(words) < 2 or words[1].text not in wrap.subcommands:
            return None
        index = 2
    while index < len(words) and (text := words[index].text) is not None:
        if text == "--":
            index += 1
            break
        if text.startswith("-") and len(text) > 1:
            index += 2 if text in wrap.values else 1
        elif wrap.assignments and re.fullmatch(r"[A-Za-z_]\w*=.*", text, re.DOTALL):
            env.append(_assignment(words[index]))
            index += 1
        else:
            break
    rest = words[index + wrap.positionals :]
    return _dispatch(rest, replace(chain, env=tuple(env)))


def _assignment(word: Word) -> Assignment:
    name, _, value = (word.text or "").partition("=")
    return Assignment(name, value, word.line, word.column, exported=True, conditional=False)


def _srun(words: list[Word], chain: _Chain) -> Launch | None:
    options, index = slurm.parse_options(words[1:], srun=True)
    facts = (*chain.wrapper_facts, *slurm.resource_facts(options, chain.file))
    rest = words[1 + index :]
    inner = _dispatch(rest, replace(chain, wrapper_facts=facts))
    if inner is not None and inner.rank == 0:  # another tool's program: srun starts it
        inner.kind, inner.launcher, inner.rank = "srun", words[0], 1
    if inner is not None:
        inner.kind = "srun" if inner.kind == "python" else inner.kind
        return inner
    if not rest or rest[0].text is None:
        return None
    return Launch("srun", chain.command, words[0], rest[0], program=rest[1:],
                  wrapper_facts=list(facts), env=list(chain.env), rank=1)  # fmt: skip


def _mpirun(words: list[Word], chain: _Chain) -> Launch | None:
    parsed = lo.parse(words[1:], lo.MPIRUN)
    exported = [o.value for o in parsed.options if o.name == "x" and o.value is not None]
    env = (*chain.env, *(_assignment(w) for w in exported if w.text and "=" in w.text))
    rest = words[1 + parsed.entry :] if parsed.entry is not None else []
    inner = _dispatch(rest, replace(chain, env=env))
    counts = lo.mpirun_facts(parsed.options, chain.file)
    if inner is not None and inner.rank == 0:  # another tool's program: one per GPU
        inner = None
    if inner is None:
        if not rest or rest[0].text is None:
            return None
        return Launch("mpirun", chain.command, words[0], rest[0], program=rest[1:],
                      facts=counts, env=list(env), rank=1)  # fmt: skip
    if inner.kind == "python":  # one process per GPU: the counts are the job's
        inner.kind, inner.rank = "mpirun", 3
        inner.facts.extend(counts)
    return inner


def _shell(words: list[Word], chain: _Chain) -> Launch | None:
    """``bash -c "STRING"`` (also ``-lc``): the launch inside the string."""
    index, has_c = 1, False
    while index < len(words) and (words[index].text or "").startswith("-"):
        text = words[index].text or ""
        has_c = has_c or (not text.startswith("--") and "c" in text)
        index += 1
    if not has_c or index >= len(words):
        return None
    return _inline(words[index], chain)


def _eval(words: list[Word], chain: _Chain) -> Launch | None:
    texts = [w.text for w in words[1:]]
    if not texts or any(t is None for t in texts):
        return None
    first = words[1]
    return _inline(
        Word(" ".join(t or "" for t in texts), first.raw, first.line, first.column), chain
    )


def _inline(word: Word, chain: _Chain) -> Launch | None:
    launches = [_dispatch(list(c.words), replace(chain, env=(*chain.env, *c.env)))
                for c in chain.inline(word)]  # fmt: skip
    return best([launch for launch in launches if launch is not None])


def _launch(spec: lo.Spec, args: list[Word], launcher: Word, chain: _Chain) -> Launch:
    parsed = lo.parse(args, spec)
    entry = args[parsed.entry] if parsed.entry is not None else None
    program = args[parsed.entry + 1 :] if parsed.entry is not None else []
    facts = lo.FACTS[spec.kind](parsed.options, chain.file)
    references = lo.launcher_references(parsed.options, chain.file)
    return Launch(spec.kind, chain.command, launcher, entry, parsed.module, program, facts,
                  list(chain.wrapper_facts), references, list(chain.env))  # fmt: skip


def _torchrun(words: list[Word], chain: _Chain) -> Launch | None:
    return _launch(lo.TORCHRUN, words[1:], words[0], chain)


def _deepspeed(words: list[Word], chain: _Chain) -> Launch | None:
    return _launch(lo.DEEPSPEED, words[1:], words[0], chain)


def _composer(words: list[Word], chain: _Chain) -> Launch | None:
    return _launch(lo.COMPOSER, words[1:], words[0], chain)


def _accelerate(words: list[Word], chain: _Chain) -> Launch | None:
    if len(words) < 2 or words[1].text != "launch":
        return None
    return _launch(lo.ACCELERATE, words[2:], words[0], chain)


_MODULES = {
    "torch.distributed.run": lo.TORCHRUN,
    "torch.distributed.launch": lo.TORCHRUN,
    "deepspeed.launcher.runner": lo.DEEPSPEED,
    "accelerate.commands.launch": lo.ACCELERATE,
}
_TOOLS = frozenset({
    "pip", "venv", "ensurepip", "http.server", "json.tool", "pytest", "unittest", "site",
    "compileall", "torch.utils.collect_env", "huggingface_hub",
})  # fmt: skip


def _python(words: list[Word], chain: _Chain) -> Launch | None:
    """``python [-u] [-W x] script.py args`` or ``python -m module args``."""
    index = 1
    while index < len(words) and (text := words[index].text or "").startswith("-") and text != "-":
        if "c" in text[1:2] or text.startswith("--"):
            return None  # -c CODE, --version, --help: no training script
        if text.endswith("m") and text[1:].isalpha():
            return _python_module(words, index + 1, chain)
        index += 2 if text in ("-W", "-X") else 1
    if index >= len(words) or words[index].text == "-":
        return None  # no script, or a program read from stdin
    entry = words[index]
    return Launch("python", chain.command, words[0], entry, program=words[index + 1 :],
                  wrapper_facts=list(chain.wrapper_facts), env=list(chain.env), rank=2)  # fmt: skip


def _python_module(words: list[Word], index: int, chain: _Chain) -> Launch | None:
    if index >= len(words) or words[index].text is None:
        return None
    module = words[index].text or ""
    if module in _MODULES:
        return _launch(_MODULES[module], words[index + 1 :], words[index], chain)
    if module in _TOOLS or module.split(".")[0] in _TOOLS:
        return None
    return Launch("python", chain.command, words[0], words[index], module=True,
                  program=words[index + 1 :], wrapper_facts=list(chain.wrapper_facts),
                  env=list(chain.env), rank=2)  # fmt: skip


# Training CLIs whose subcommand runs a recipe: their arguments (config paths, HF-style flags)
# are read like a training script's. ``tune run`` takes torchrun's options before its recipe.
_TOOL_SUBCOMMANDS = {
    "axolotl": {"train", "preprocess"}, "llamafactory-cli": {"train"},
    "litgpt": {"pretrain", "finetune", "finetune_lora", "finetune_full", "finetune_adapter"},
    "trl": {"sft", "dpo", "grpo", "kto", "reward", "rloo"},
}  # fmt: skip


def _tool(words: list[Word], chain: _Chain) -> Launch | None:
    """``axolotl train cfg.yml``, ``llamafactory-cli train cfg.yaml``, ``trl sft --config x``."""
    tool = (words[0].text or "").rsplit("/", 1)[-1]
    if len(words) < 2 or words[1].text not in _TOOL_SUBCOMMANDS.get(tool, ()):
        return None
    return Launch(tool, chain.command, words[0], words[1], program=words[2:],
                  wrapper_facts=list(chain.wrapper_facts), env=list(chain.env))  # fmt: skip


def _tune(words: list[Word], chain: _Chain) -> Launch | None:
    """``tune run [torchrun options] <recipe> --config <name|path> key=value ...``."""
    if len(words) < 2 or words[1].text != "run":
        return None
    launch = _launch(lo.TORCHRUN, words[2:], words[0], chain)
    launch.kind = "tune"
    return launch


_HANDLERS: dict[str, Callable[[list[Word], _Chain], Launch | None]] = {
    "tune": _tune,
    "ray": _ray,
    "debugpy-run": _debugpy_run,
    **dict.fromkeys(_TOOL_SUBCOMMANDS, _tool),
    "srun": _srun,
    "mpirun": _mpirun,
    "mpiexec": _mpirun,
    "orterun": _mpirun,
    "bash": _shell,
    "sh": _shell,
    "zsh": _shell,
    "eval": _eval,
    "torchrun": _torchrun,
    "deepspeed": _deepspeed,
    "accelerate": _accelerate,
    "composer": _composer,
}


def location(file: str, word: Word) -> Location:
    return Location(file=file, line=word.line, column=word.column)
