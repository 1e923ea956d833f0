"""Every command and subcommand, given bad arguments, exits 2 with one clear error line and no
traceback: click's command tree is walked, so a command added later is covered too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from trainlint.cli import main

MISSING = "does/not/exist"


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The name path of every leaf command (``("pack", "sign")``)."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))
        else:
            yield (*prefix, name)


def command_at(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command


ALL = list(commands())
# Paths a command writes (created when missing) or reads only later, by design: a missing
# one is not a usage error. Every other path that need not exist must be refused by the
# command itself; a new path parameter must be classified here or the test fails.
WRITTEN = {
    ("check", "output"), ("check", "write_baseline"), ("init", "folder"),
    ("pack init", "directory"), ("pack build", "output"), ("probe", "out"),
    ("comment", "paths"),  # compared at the base and the head: may exist at the base only
    ("report", "output"),
}  # fmt: skip
READ = {("check", "paths"), ("show", "paths"), ("estimate", "paths"), ("report", "paths"),
        ("scan", "repositories")}  # fmt: skip


def run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args)


def assert_usage_error(result: Result, *expected: str) -> None:
    """Exit 2, no traceback (no exception but the exit), and exactly one line saying what is
    wrong (click's ``Error:`` or trainlint's ``trainlint: error:``), naming ``expected``."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines()
              if line.startswith(("Error: ", "trainlint: error: "))]  # fmt: skip
    assert len(errors) == 1, result.output
    for text in expected:
        assert text in errors[0], errors[0]


def valid_arguments(command: click.Command, folder: Path) -> list[str]:
    """The least that parses: each required parameter given a value of its type."""
    args: list[str] = []
    for param in command.params:
        if param.required:
            value = value_for(param, folder)
            args += [param.opts[0], value] if isinstance(param, click.Option) else [value]
    return args


def value_for(param: click.Parameter, folder: Path) -> str:
    kind = param.type
    if isinstance(kind, click.Choice):
        return str(kind.choices[0])
    if isinstance(kind, click.Path):
        return str(folder / ("file.txt" if not kind.dir_okay else "dir"))
    return "x"


@pytest.fixture
def folder(in_tmp: Path) -> Path:
    (in_tmp / "dir").mkdir()
    (in_tmp / "file.txt").write_text("x\n")
    return in_tmp


@pytest.mark.parametrize("path", ALL, ids=" ".join)
def test_an_unknown_option(path: tuple[str, ...], folder: Path) -> None:
    command = command_at(path)
    result = run([*path, *valid_arguments(command, folder), "--no-such-option"])
    assert_usage_error(result, "No such option '--no-such-option'")


@pytest.mark.parametrize(
    "path", [p for p in ALL if any(q.required for q in command_at(p).params)], ids=" ".join
)
def test_a_missing_required_argument(path: tuple[str, ...], folder: Path) -> None:
    assert_usage_error(run(list(path)), "Missing")


def params_of(kind: type[click.ParamType[Any]]) -> list[tuple[tuple[str, ...], str]]:
    return [(path, param.name or "") for path in ALL for param in command_at(path).params
            if isinstance(param.type, kind)]  # fmt: skip


def with_value(path: tuple[str, ...], name: str, value: str, folder: Path) -> list[str]:
    """A valid invocation of ``path`` with the parameter ``name`` set to ``value``."""
    command = command_at(path)
    param = next(p for p in command.params if p.name == name)
    args = [a for p in command.params if p.required and p is not param
            for a in valid_arguments_of(p, folder)]  # fmt: skip
    own = [param.opts[0], value] if isinstance(param, click.Option) else [value]
    return [*path, *args, *own]


def valid_arguments_of(param: click.Parameter, folder: Path) -> list[str]:
    value = value_for(param, folder)
    return [param.opts[0], value] if isinstance(param, click.Option) else [value]


@pytest.mark.parametrize(("path", "name"), params_of(click.Choice), ids=str)
def test_a_bad_choice(path: tuple[str, ...], name: str, folder: Path) -> None:
    assert_usage_error(run(with_value(path, name, "bogus", folder)), "'bogus' is not one of")


PATHS = params_of(click.Path)


@pytest.mark.parametrize(
    ("path", "name"), [(p, n) for p, n in PATHS if (" ".join(p), n) not in WRITTEN], ids=str
)
def test_a_path_that_does_not_exist(path: tuple[str, ...], name: str, folder: Path) -> None:
    assert_usage_error(run(with_value(path, name, MISSING, folder)), MISSING)


def test_every_path_parameter_is_classified() -> None:
    """A path that need not exist is either written or read by the command, which says so."""
    loose = set()
    for path, name in PATHS:
        param = next(q for q in command_at(path).params if q.name == name)
        assert isinstance(param.type, click.Path)
        if not param.type.exists:
            loose.add((" ".join(path), name))
    assert loose == WRITTEN | READ


@pytest.mark.parametrize("group", [(), ("pack",)], ids=lambda g: " ".join(("trainlint", *g)))
def test_an_unknown_command_or_group_option(group: tuple[str, ...], in_tmp: Path) -> None:
    assert_usage_error(run([*group, "chek"]), "No such command 'chek'")
    assert_usage_error(run([*group, "--no-such-option"]), "No such option")
