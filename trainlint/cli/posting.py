"""``trainlint comment``: the cost-diff comment on a pull or merge request."""

from __future__ import annotations

import os
from pathlib import Path

import click

from trainlint.cli.base import handle_errors, main


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--github", "host_kind", flag_value="github", help="Post on a GitHub pull request.")
@click.option("--gitlab", "host_kind", flag_value="gitlab", help="Post on a GitLab merge request.")
@click.option("--repo", help="GitHub repository OWNER/NAME.")
@click.option("--pr", type=int, help="GitHub pull request number.")
@click.option("--project", help="GitLab project id or path (group/project).")
@click.option("--mr", type=int, help="GitLab merge request IID.")
@click.option("--base", help="Base ref to diff against.  [default: $GITHUB_BASE_REF or the PR's]")
@click.option(
    "--behavior",
    type=click.Choice(["update", "new", "delete-and-new"]),
    default="update",
    show_default=True,
    help="update: edit our comment (nothing sent when unchanged); new: always add one; "
    "delete-and-new: delete ours, then add one.",
)
@click.option(
    "--body-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Post this prepared markdown instead of computing the diff comment.",
)
@click.option("--dry-run", is_flag=True, help="Print the body; send nothing.")
@click.option(
    "--db",
    "db_url",
    metavar="URL",
    help="The org's scan database: the comment says which team budgets the change crosses.",
)
@handle_errors
def comment(  # noqa: PLR0913 - a click command: one parameter per option
    paths: tuple[Path, ...],
    host_kind: str | None,
    repo: str | None,
    pr: int | None,
    project: str | None,
    mr: int | None,
    base: str | None,
    behavior: str,
    body_file: Path | None,
    dry_run: bool,
    db_url: str | None = None,
) -> None:
    """Post the cost-diff comment on a pull request or merge request (GITHUB_TOKEN/GITLAB_TOKEN)."""
    from trainlint.comment import post, sync

    kind, target, number = post.target(host_kind, repo, pr, project, mr)
    host = None if dry_run else post.open_host(kind, target, number, os.environ)
    if body_file is not None:
        body = body_file.read_text(encoding="utf-8")
    else:
        ref = post.base_ref(kind, base, os.environ, host)
        body = diff_body(paths, ref, post.link_base(kind, target, os.environ), db_url)
    if host is None:
        click.echo(body, nl=not body.endswith("\n"))
        return
    outcome = sync(host, body, post.marker(), post.as_behavior(behavior))
    where = outcome.comment.url if outcome.comment and outcome.comment.url else host.label
    click.echo(f"trainlint: comment {outcome.action}: {where}", err=True)


def diff_body(
    paths: tuple[Path, ...], base: str, links: str | None, db_url: str | None = None
) -> str:
    """The PR comment for the jobs changed since ``base`` (diff mode, rendered as markdown);
    with the scan database, the team budgets the change crosses first."""
    from trainlint.cli.scanning import database_context
    from trainlint.diff import diff_check
    from trainlint.lint import CheckOptions
    from trainlint.report.markdown import render_comment
    from trainlint.scans.render import budget_notes

    targets = list(paths) or [Path(".")]
    diff = diff_check(targets, base, CheckOptions(context=database_context(db_url, targets)))
    notes = budget_notes(diff.head_report().jobs) if db_url else []
    body = render_comment(diff, link_base=links)
    return "".join(f"> **Budget:** {note}\n\n" for note in notes) + body
