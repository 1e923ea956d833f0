"""Launch commands embedded in YAML: a SkyPilot ``run:`` script, a Kubernetes container's
``command``/``args`` or a RayJob ``entrypoint``.

The shell reader and the launcher analysis are the launch-script format's (``shell``,
``launchers``, and ``launch_script``'s fact and reference logic), so a ``torchrun`` line means
the same thing in a manifest as in ``train.sh``. A script written inside a YAML value is read on
its own and every position is then shifted to where the value sits in the YAML file.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial

from trainlint.job import Location
from trainlint.sources import launch_script, shell
from trainlint.sources.base import Fact, Override, Reference
from trainlint.sources.shell import Assignment, Command, Script, Word, launchers

Environ = Mapping[str, str | None]
Found = tuple[list[Fact], list[Reference]]


def script_facts(
    text: str,
    file: str,
    origin: tuple[int, int],
    environ: Environ | None = None,
    prefixes: tuple[str, ...] = (),
) -> Found:
    """Facts of a bash script held in a YAML value whose line 1, column 1 is ``origin``
    (1-based, in the YAML file): its exports, its best launch and the files it names."""
    script = shell.parse_script(text, environ, prefixes)
    launch = launch_script.script_launch(script, file, environ, prefixes)
    facts, references = _launch_found(launch, script, file)
    facts = launch_script.env_facts(script, launch, file) + facts
    references += launch_script.script_references(script, file)
    return shift(facts, references, origin)


def script_program(
    text: str, file: str, origin: tuple[int, int], environ: Environ | None = None
) -> Reference | None:
    """The Python script the best launch of a YAML-held bash script runs (a RayJob's
    ``entrypoint: python train.py``), located in the YAML file: read when it is in the
    repository, for what it states itself (``ScalingConfig``, argument defaults)."""
    script = shell.parse_script(text, environ, ())
    launch = launch_script.script_launch(script, file, environ, ())
    found = launch_script.entry_script(launch, file) if launch is not None else None
    return shift([], [found], origin)[1][0] if found is not None else None


def command_program(words: Sequence[Word], file: str) -> Reference | None:
    """The Python script an exec-form command (a container's ``command`` + ``args``) runs."""
    if not words:
        return None
    first = words[0]
    command = Command(first, tuple(words[1:]), (), first.line, first.column, "", False)
    launch = launchers.analyse(command, file, partial(shell.parse_inline))
    return launch_script.entry_script(launch, file) if launch is not None else None


def script_overrides(
    text: str,
    file: str,
    origin: tuple[int, int],
    environ: Environ | None = None,
    prefixes: tuple[str, ...] = (),
) -> list[Override]:
    """The command-line overrides of the script's best launch (``tune run ... batch_size=8``),
    located in the file holding the script, for the configs it names to read."""
    script = shell.parse_script(text, environ, prefixes)
    launch = launch_script.script_launch(script, file, environ, prefixes)
    if launch is None:
        return []
    line, column = origin
    return [
        replace(o, location=o.location.model_copy(update={
            "line": o.location.line + line - 1, "column": o.location.column + column - 1}))
        for o in launch_script.program_overrides(launch.program, file)
    ]  # fmt: skip


def command_facts(
    words: Sequence[Word], env: Sequence[Assignment], file: str, environ: Environ | None = None
) -> Found:
    """Facts of an exec-form command (a container's ``command`` + ``args``: no shell, each
    word already located in the YAML); ``env`` is the container's environment."""
    if not words:
        return [], []
    first = words[0]
    text = shlex.join(w.text if w.text is not None else w.raw for w in words)
    command = Command(first, tuple(words[1:]), tuple(env), first.line, first.column, text, False)
    inline = partial(shell.parse_inline, environ=environ)
    launch = launchers.analyse(command, file, inline)
    facts, references = _launch_found(launch, Script(), file)
    if facts and launch is not None:  # ``mpirun -x NCCL_DEBUG=INFO``: set in every rank
        given = {(a.name, a.line, a.column) for a in env}
        added = [a for a in launch.env if (a.name, a.line, a.column) not in given]
        facts += launch_script.env_facts(Script(), replace(launch, env=added), file)
    return facts, references


def command_overrides(words: Sequence[Word], file: str) -> list[Override]:
    """The overrides an exec-form command passes to the configs it names."""
    if not words:
        return []
    first = words[0]
    command = Command(first, tuple(words[1:]), (), first.line, first.column, "", False)
    launch = launchers.analyse(command, file, partial(shell.parse_inline))
    return launch_script.program_overrides(launch.program, file) if launch else []


def _launch_found(launch: launchers.Launch | None, script: Script, file: str) -> Found:
    """An evaluation, serving or other launch that is no training sets nothing."""
    if launch is None or launch.purpose is not None:
        return [], []
    facts = launch_script.launch_facts(launch, [], script, file)
    return facts, launch_script.launch_references(launch, file)


def shift(facts: list[Fact], references: list[Reference], origin: tuple[int, int]) -> Found:
    """Positions relative to an embedded script → positions in the file holding it."""
    line, column = origin

    def move(where: Location) -> Location:
        moved_column = where.column + column - 1
        return where.model_copy(update={"line": where.line + line - 1, "column": moved_column})

    return (
        [replace(fact, location=move(fact.location)) for fact in facts],
        [replace(ref, location=move(ref.location)) for ref in references],
    )


_KEY_COLON = re.compile(r"""\s*:(?:\s+|$)""")


def value_origin(text: str, key_line: int, key_column: int) -> tuple[int, int] | None:
    """Where line 1, column 1 of a string value begins, from the position of its key.

    A block scalar (``run: |``) starts on the next line, at the indentation of its first
    non-blank line; a plain or quoted scalar on the key's own line, after the colon (and the
    quote). None when the key's line cannot be found (a flow mapping spread oddly)."""
    lines = text.splitlines()
    if not 0 < key_line <= len(lines):
        return None
    line_text = lines[key_line - 1]
    key_end = _key_end(line_text, key_column - 1)
    match = _KEY_COLON.match(line_text, key_end) if key_end is not None else None
    if match is None:
        return None
    rest = line_text[match.end() :]
    if rest[:1] in ("|", ">"):
        for content in lines[key_line:]:
            if content.strip():  # leading blank lines are part of the value
                return key_line + 1, len(content) - len(content.lstrip(" ")) + 1
        return None
    quote = 1 if rest[:1] in ("'", '"') else 0
    return key_line, match.end() + quote + 1


def _key_end(line_text: str, start: int) -> int | None:
    """The index just after a (possibly quoted) key that starts at ``start``."""
    if start >= len(line_text):
        return None
    quote = line_text[start]
    if quote in ("'", '"'):
        end = line_text.find(quote, start + 1)
        return None if end < 0 else end + 1
    colon = re.compile(r":(?:\s|$)").search(line_text, start)
    return None if colon is None else colon.start()
