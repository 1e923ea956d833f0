"""Commands that explain rather than check: show, estimate, rule, rules, formats, init."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trainlint.cli.base import handle_errors, main
from trainlint.errors import ConfigError

if TYPE_CHECKING:
    from rich.table import Table

    from trainlint.job import Job
    from trainlint.policy import Policy


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["json", "yaml"]), default="json", show_default=True
)
@click.option(
    "--files",
    "files",
    is_flag=True,
    help="Show what became of every candidate file instead: part of a job, skipped (and why), "
    "or a GPU workload not understood.",
)
@handle_errors
def show(paths: tuple[Path, ...], fmt: str, files: bool) -> None:
    """Show the jobs trainlint sees: every fact with its provenance, and the estimates."""
    import json

    import yaml

    from trainlint.lint import load

    loaded = load(list(paths) or [Path(".")])
    document: dict[str, object]
    if files:
        document = {"files": [f.model_dump(mode="json", exclude_none=True) for f in loaded.files]}
    else:
        document = {"jobs": [job.as_input() for job in loaded.jobs]}
    if fmt == "json":
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(yaml.safe_dump(document, sort_keys=False), nl=False)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handle_errors
def estimate(paths: tuple[Path, ...], fmt: str) -> None:
    """Estimate memory per GPU, step time, run cost and checkpoint overhead, with sources."""
    import json

    from trainlint.estimate_view import document as estimate_document
    from trainlint.estimate_view import render_text as render_estimates
    from trainlint.lint import load_jobs

    jobs = load_jobs(list(paths) or [Path(".")])
    if fmt == "json":
        click.echo(json.dumps(estimate_document(jobs), indent=2))
    elif sys.stdout.isatty() and jobs:
        from rich.console import Console

        console = Console()
        for table in estimate_tables(jobs):
            console.print(table)
    else:
        click.echo(render_estimates(jobs), nl=False)


def estimate_tables(jobs: list[Job]) -> list[Table]:
    """One table per job for a terminal. Job ids, labels and sources are text, never rich
    markup: escaped, so ``runs/[exp-1]/train.yaml`` keeps its brackets."""
    from rich.markup import escape
    from rich.table import Table

    from trainlint.estimate_view import view as estimate_view

    tables = []
    for job in jobs:
        shown = estimate_view(job)
        table = Table(title=escape(shown.id), title_justify="left", show_header=True)
        for column in ("section", "estimate", "value", "source"):
            table.add_column(column, justify="right" if column == "value" else "left")
        section = None
        for row in shown.rows:
            heading = row.section if row.section != section else ""
            table.add_row(*map(escape, (heading, row.label, row.value, row.source)))
            section = row.section
        for name, how in shown.unknown:
            table.add_row("Unknown input", escape(name), "", escape(how), style="yellow")
        tables.append(table)
    return tables


@main.command()
@click.argument("key")
@handle_errors
def rule(key: str) -> None:
    """Explain one rule (id or slug): what it does, why, an example, the fix, its options."""
    from trainlint.rule_docs import render_rule, rule_params

    policy = _policy_here()
    pack = policy.pack
    meta = pack.get_rule(key)
    if meta is None:
        from trainlint.suggest import closest

        names = [name for rule in pack.rules for name in (rule.id, rule.slug)]
        match = closest(key, names)
        hint = f"did you mean {match!r}? " if match else ""
        raise ConfigError(f"unknown rule {key!r} ({hint}see `trainlint rules`)")
    text = render_rule(meta, rule_params(meta, pack), pack=policy.rule_packs.get(meta.id))
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown  # markdown-it: only for this command

        Console().print(Markdown(text))
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing .trainlint.toml.")
@handle_errors
def init(folder: Path | None, force: bool) -> None:
    """Write a commented starter .trainlint.toml in FOLDER (default: the current directory)."""
    from trainlint.starter import STARTER_TOML
    from trainlint.writing import replace_file

    target = (folder or Path(".")) / ".trainlint.toml"
    if os.path.lexists(target) and not force:
        raise ConfigError(f"{target} exists (use --force to overwrite it)")
    replace_file(target, STARTER_TOML)
    click.echo(f"Wrote {target}.")


@main.command()
@handle_errors
def rules() -> None:
    """List the rules that run here: the builtin pack's, then each configured pack's."""
    policy = _policy_here()
    listed = sorted(policy.pack.rules, key=lambda r: (r.id in policy.rule_packs, r.id))
    width = max((len(rule.id) for rule in listed), default=0)
    for rule in listed:
        summary = first_sentence(rule.description)
        pack = policy.rule_packs.get(rule.id)
        origin = f" [pack {pack}]" if pack else ""
        click.echo(f"{rule.id:<{width}}  {rule.slug:<26} {rule.severity:<8} {summary}{origin}")


def _policy_here() -> Policy:
    """The policy a check of the current directory runs: the builtin pack, the packs named
    in ``TRAINLINT_PACKS`` and the ones the config lists."""
    from trainlint.config import find_config
    from trainlint.policy import load_policy

    required = os.environ.get("TRAINLINT_PACKS", "").split()
    return load_policy(find_config(Path(".")), required=required)


@main.command()
@handle_errors
def formats() -> None:
    """List the formats trainlint reads, with example file names (docs/formats.md has keys)."""
    from trainlint.formats import catalogue

    for info in catalogue():
        examples = ", ".join(info.examples)
        click.echo(f"{info.name:<16} {info.role:<11} {examples}")


def first_sentence(text: str) -> str:
    """A rule's one-line summary: the first sentence of its METADATA description."""
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]
