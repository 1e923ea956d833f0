"""Command line: thin click commands over the library (only this module imports click/rich).

Exit codes (STYLE: pre-commit's tiers): 0 clean, 1 findings at or above ``--fail-on``,
2 usage/config/policy error, 3 crash (with a crash report), 130 interrupted.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from trainlint import __version__
from trainlint import engine as engines
from trainlint.errors import ConfigError, TrainlintError
from trainlint.parallel import THRESHOLD as PARALLEL_THRESHOLD
from trainlint.report import names as report_names
from trainlint.report import renderer

if TYPE_CHECKING:
    from rich.console import Console

    from trainlint.findings import Severity
    from trainlint.lint import Report

# Start-up time matters (a pre-commit hook runs this once per commit): this module imports
# click and the cheap registries only; each command imports what it uses (pydantic models,
# the packs, rich, yaml) when it runs, so ``--version`` and ``--help`` import almost nothing.

F = TypeVar("F", bound=Callable[..., Any])

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_CRASH, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def run_check(*args: Any, **kwargs: Any) -> Report:
    """``trainlint.lint.check``, imported when a check runs."""
    from trainlint.lint import check as lint_check

    return lint_check(*args, **kwargs)


def text_console() -> Console:
    """A console that colours the text format on a terminal; files and pipes get plain text."""
    from rich.console import Console
    from rich.highlighter import RegexHighlighter
    from rich.theme import Theme

    class FindingHighlighter(RegexHighlighter):
        base_style = "tl."
        highlights = [  # noqa: RUF012 (rich's API is a class attribute)
            r"^(?P<location>[^\s:]+:\d+:\d+):",
            r"(?P<rule>\bTL\d{3}\b)",
            r"(?P<error>\[error\])|(?P<warning>\[warning\])|(?P<info>\[info\])",
            r"(?P<cost>\(~[^)]*per run\))",
        ]

    theme = Theme({
        "tl.location": "bold", "tl.rule": "bold magenta", "tl.error": "bold red",
        "tl.warning": "yellow", "tl.info": "cyan", "tl.cost": "green",
    })  # fmt: skip
    return Console(highlighter=FindingHighlighter(), theme=theme)


def handle_errors(command: F) -> F:
    """One top-level handler: user errors are one line (exit 2), crashes leave a report (exit 3)."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except TrainlintError as exc:
            click.echo(f"trainlint: error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            sys.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # `trainlint show | head`: the reader left, nothing is wrong
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stdout must stay open to exit)
            sys.exit(EXIT_CLEAN)
        except Exception:
            path = write_crash_report()
            click.echo(f"trainlint: internal error; crash report written to {path}", err=True)
            sys.exit(EXIT_CRASH)

    return wrapper  # type: ignore[return-value]


def write_crash_report() -> Path:
    """Versions and the traceback (never file contents), for a bug report."""
    import platform
    import tempfile
    import traceback
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    with tempfile.NamedTemporaryFile(
        "w", prefix=f"trainlint-crash-{stamp}-", suffix=".log", delete=False
    ) as handle:
        handle.write(
            f"trainlint {__version__}\npython {sys.version}\nplatform {platform.platform()}\n"
        )
        handle.write(f"argv {sys.argv}\n\n{traceback.format_exc()}")
    return Path(handle.name)


def run() -> None:
    """The ``trainlint`` program (console script and ``python -m trainlint``): ``main`` with
    the garbage collector set for a short run. Tests call ``main`` and keep their own."""
    collect_rarely()
    main()


def collect_rarely() -> None:
    """A check allocates millions of small objects (parsed documents, facts, jobs) that live
    until the report is written, and CPython's default thresholds rescan them ever more often
    as they pile up: the collector took 0.14 s of a one-process 1,000-file check and 1.5 s of
    a 5,000-file one, 0.04 s and 0.26 s with this setting (docs/benchmarks.md). The objects
    alive now are frozen out of collection and the young generation is collected every 50,000
    allocations; reference cycles are still collected. Forked workers inherit the setting."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="trainlint")
def main() -> None:
    """Policy-as-code linter for ML training jobs."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(report_names()),
    default=None,
    help="Report format.  [default: github when GITHUB_ACTIONS=true, else text]",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here."
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info"]),
    default=None,
    help="Exit 1 when a finding that counts has at least this severity.  [default: the "
    "config's fail-on, else warning]",
)
@click.option(
    "--select",
    multiple=True,
    help="Rules to run: id, prefix (TL2) or slug; repeatable or comma-separated. Replaces "
    "the config's select.",
)
@click.option(
    "--extend-select",
    multiple=True,
    help="Rules to run in addition to the selected ones.",
)
@click.option(
    "--ignore",
    multiple=True,
    help="Rules to skip: id, prefix or slug; repeatable or comma-separated.",
)
@click.option(
    "--engine",
    "engine_name",
    type=click.Choice(sorted(engines.ENGINES)),
    default=engines.DEFAULT_ENGINE,
    show_default=True,
    help="Rego engine backend (opa: an OPA server's REST API, with --opa-url).",
)
@click.option(
    "--opa-url",
    metavar="URL",
    help="OPA server that evaluates the rules (--engine opa), e.g. http://opa:8181; a bearer "
    "token is read from TRAINLINT_OPA_TOKEN.",
)
@click.option(
    "--namespace",
    "namespaces",
    multiple=True,
    metavar="NS",
    help="Conftest-style namespace (package) whose deny/violation/warn rules run; repeatable, "
    "globs allowed (org.*).  [default: main]",
)
@click.option(
    "--all-namespaces",
    is_flag=True,
    help="Run the deny/violation/warn rules of every package in the pack.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Findings recorded in this baseline file do not count.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record the findings that count now in this file, then exit 0.",
)
@click.option(
    "--offline",
    is_flag=True,
    help="Use remote packs from the cache only; never touch the network.",
)
@click.option(
    "--diff",
    "diff_base",
    metavar="BASE_REF",
    help="Check only the jobs touched since the merge base of BASE_REF and HEAD (working "
    "tree included), at both revisions; report new and fixed findings and the cost change. "
    "Only new findings count for the exit code.",
)
@click.option(
    "--jobs",
    "-j",
    "workers",
    type=click.IntRange(min=1),
    help="Worker processes for parsing and evaluation.  [default: 2 (at most the cores) "
    f"from {PARALLEL_THRESHOLD} files or jobs, else 1]",
)
@handle_errors
def check(
    paths: tuple[Path, ...],
    fmt: str | None,
    output: Path | None,
    fail_on: str | None,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    engine_name: str,
    opa_url: str | None,
    namespaces: tuple[str, ...],
    all_namespaces: bool,
    baseline: Path | None,
    write_baseline: Path | None,
    offline: bool,
    diff_base: str | None = None,
    workers: int | None = None,
) -> None:
    """Check the training jobs under PATHS (default: the current directory)."""
    from trainlint import suppress
    from trainlint.config import find_config
    from trainlint.findings import at_or_above

    if engine_name == "opa" and not opa_url:
        raise ConfigError("--engine opa needs --opa-url URL (the OPA server)")
    if opa_url and engine_name != "opa":
        raise ConfigError("--opa-url is only used with --engine opa")
    targets = list(paths) or [Path(".")]
    config = find_config(targets[0])
    if diff_base is not None:
        if write_baseline is not None:
            raise ConfigError("--write-baseline cannot be combined with --diff")
        options = dict(
            engine_name=engine_name, select=_split(select) or None, ignore=_split(ignore),
            extend_select=_split(extend_select), baseline=baseline, opa_url=opa_url,
            namespaces=_split(namespaces), all_namespaces=all_namespaces, offline=offline,
        )  # fmt: skip
        threshold = cast("Severity", fail_on or config.fail_on or "warning")
        sys.exit(check_diff(targets, diff_base, fmt, output, threshold, options))
    report = run_check(
        targets, engine_name, _split(select) or None, _split(ignore),
        extend_select=_split(extend_select), baseline=baseline, config=config,
        opa_url=opa_url, namespaces=_split(namespaces), all_namespaces=all_namespaces,
        offline=offline, workers=workers,
    )  # fmt: skip
    if write_baseline is not None:
        written = suppress.write_baseline(report.findings, write_baseline)
        click.echo(f"Wrote {written} finding(s) to {write_baseline}.")
        sys.exit(EXIT_ERROR if report.errors else EXIT_CLEAN)
    fmt = fmt or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    text = renderer(fmt)(report)
    if fmt == "github":
        append_step_summary(report)
    if output is not None:
        output.write_text(text)
    elif fmt == "text" and sys.stdout.isatty():
        text_console().print(text, end="", soft_wrap=True)
    else:
        click.echo(text, nl=False)
    if report.errors:
        sys.exit(EXIT_ERROR)
    threshold = cast("Severity", fail_on or config.fail_on or "warning")
    counted = [f for f in report.findings if f.suppression is None]
    sys.exit(EXIT_FINDINGS if at_or_above(counted, threshold) else EXIT_CLEAN)


def check_diff(
    targets: list[Path], base: str, fmt: str | None, output: Path | None,
    threshold: Severity, options: dict[str, Any],
) -> int:  # fmt: skip
    """``check --diff``: text = the new findings and a summary, json = the DiffReport,
    markdown = the PR comment; any other format renders the head's new findings only."""
    from trainlint.diff import diff_check
    from trainlint.findings import at_or_above
    from trainlint.report import markdown, text

    diff = diff_check(targets, base, **options)
    fmt = fmt or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    if fmt == "json":
        rendered = diff.model_dump_json(indent=2) + "\n"
    elif fmt == "markdown":
        rendered = markdown.render_comment(diff)
    elif fmt == "text":
        lines = [text.format_finding(f) for f in diff.new]
        lines += [f"error: {e.side}: {e.job}: {e.message}" for e in diff.errors]
        rendered = "\n".join([*lines, markdown.diff_line(diff)]) + "\n"
    else:
        rendered = renderer(fmt)(diff.head_report_new_only())
        if fmt == "github":
            append_step_summary(diff.head_report_new_only())
    if output is not None:
        output.write_text(rendered)
    elif fmt == "text" and sys.stdout.isatty():
        text_console().print(rendered, end="", soft_wrap=True)
    else:
        click.echo(rendered, nl=False)
    if diff.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if at_or_above(diff.new, threshold) else EXIT_CLEAN


def append_step_summary(report: Report) -> None:
    """In GitHub Actions, add the job summary (every finding) to the step's summary file."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        from trainlint.report import github as github_report

        with open(path, "a", encoding="utf-8") as handle:
            handle.write(github_report.job_summary(report))


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["json", "yaml"]), default="json", show_default=True
)
@handle_errors
def show(paths: tuple[Path, ...], fmt: str) -> None:
    """Show the jobs trainlint sees: every fact with its provenance, and the estimates."""
    import json

    import yaml

    from trainlint.lint import load_jobs

    jobs = load_jobs(list(paths) or [Path(".")])
    document = {"jobs": [job.as_input() for job in jobs]}
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
    from trainlint.estimate_view import view as estimate_view
    from trainlint.lint import load_jobs

    jobs = load_jobs(list(paths) or [Path(".")])
    if fmt == "json":
        click.echo(json.dumps(estimate_document(jobs), indent=2))
    elif sys.stdout.isatty() and jobs:
        from rich.console import Console
        from rich.table import Table

        console = Console()
        for job in jobs:
            shown = estimate_view(job)
            table = Table(title=shown.id, title_justify="left", show_header=True)
            for column in ("section", "estimate", "value", "source"):
                table.add_column(column, justify="right" if column == "value" else "left")
            section = None
            for row in shown.rows:
                heading = row.section if row.section != section else ""
                table.add_row(heading, row.label, row.value, row.source)
                section = row.section
            for name, how in shown.unknown:
                table.add_row("Unknown input", name, "", how, style="yellow")
            console.print(table)
    else:
        click.echo(render_estimates(jobs), nl=False)


@main.command()
@click.argument("key")
@handle_errors
def rule(key: str) -> None:
    """Explain one rule (id or slug): what it does, why, an example, the fix, its options."""
    from trainlint.config import find_config
    from trainlint.policy import load_policy
    from trainlint.rule_docs import render_rule, rule_params

    config = find_config(Path("."))
    pack = load_policy(config).pack
    meta = pack.get_rule(key)
    if meta is None:
        raise ConfigError(f"unknown rule {key!r} (see `trainlint rules`)")
    text = render_rule(meta, rule_params(meta, pack))
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

    target = (folder or Path(".")) / ".trainlint.toml"
    if target.exists() and not force:
        raise ConfigError(f"{target} exists (use --force to overwrite it)")
    target.write_text(STARTER_TOML)
    click.echo(f"Wrote {target}.")


@main.group()
def pack() -> None:
    """Build, inspect, test, sign and verify policy packs (OPA bundles)."""


@pack.command("init")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="Where to write the pack.  [default: ./NAME]")  # fmt: skip
@handle_errors
def pack_init(name: str, directory: Path | None) -> None:
    """Write a pack skeleton: manifest, an example rule with tests, params, cases, README."""
    target = directory or Path(name)
    from trainlint.packs import scaffold

    written = scaffold.init(name, target)
    click.echo(f"Wrote pack {name!r} in {target} ({len(written)} files).")


@pack.command("build")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The .tar.gz bundle to write.")  # fmt: skip
@handle_errors
def pack_build(directory: Path, output: Path) -> None:
    """Build DIRECTORY into a deterministic .tar.gz bundle (sign first to ship it signed)."""
    import hashlib

    from trainlint.packs import bundle

    members = bundle.build(directory, output)
    digest = hashlib.sha256(output.read_bytes()).hexdigest()
    click.echo(f"Built {output} ({len(members)} files), sha256 {digest}")


@pack.command("inspect")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)  # fmt: skip
@handle_errors
def pack_inspect(path: Path, fmt: str) -> None:
    """Show a pack (directory or .tar.gz): name, revision, roots, rules, params, locks."""
    import json

    from trainlint.packs import describe_pack, render_description

    desc = describe_pack(path)
    text = json.dumps(desc, indent=2) + "\n" if fmt == "json" else render_description(desc)
    click.echo(text, nl=False)


# signing.ALGORITHMS, spelled out so that `check` never imports PyJWT (a test keeps them equal).
SIGNING_ALGORITHMS = ("RS256", "ES256", "HS256")
_ALGORITHMS = click.Choice(list(SIGNING_ALGORITHMS))
_KEY_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@pack.command("sign")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--key", "key_file", type=_KEY_FILE, required=True,
              help="PEM private key (RS256, ES256) or a file holding the secret.")  # fmt: skip
@click.option("--algorithm", type=_ALGORITHMS, required=True)
@click.option("--key-id", help="Key id written into the signature (JWT kid and keyid).")
@click.option("--scope", help="Scope claim, checked by OPA and by `pack verify --scope`.")
@handle_errors
def pack_sign(
    directory: Path, key_file: Path, algorithm: str, key_id: str | None, scope: str | None
) -> None:
    """Write DIRECTORY/.signatures.json (OPA bundle signing); build afterwards."""
    from trainlint.packs import signing

    target = signing.sign(directory, key_file.read_bytes(), algorithm, key_id, scope)
    click.echo(f"Wrote {target}.")


@pack.command("verify")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--key", "key_file", type=_KEY_FILE, required=True,
              help="PEM public key (RS256, ES256) or a file holding the secret.")  # fmt: skip
@click.option("--algorithm", type=_ALGORITHMS, help="[default: from the key]")
@click.option("--key-id", help="Refuse a signature made under another key id.")
@click.option("--scope", help="The scope the signature must carry.")
@handle_errors
def pack_verify(
    path: Path, key_file: Path, algorithm: str | None, key_id: str | None, scope: str | None
) -> None:
    """Check a signed pack: exit 0 when every file matches its signature, 2 with the reason."""
    from trainlint.packs import signing

    signing.verify_bundle(path, key_file.read_bytes(), algorithm, key_id, scope)
    click.echo(f"{path}: signature verified.")


@pack.command("test")
@click.argument("directory", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--cases",
    "case_dirs",
    multiple=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Folder of data-driven case files (*.yaml); repeatable.  [default: the pack's "
    "tests/cases or cases]",
)
@click.option(
    "--engine",
    "engine_name",
    type=click.Choice(sorted(name for name, b in engines.ENGINES.items() if not b.remote)),
    default=engines.DEFAULT_ENGINE,
    show_default=True,
    help="Engine for the cases (Rego unit tests always run on regorus).",
)
@handle_errors
def pack_test(directory: Path, case_dirs: tuple[Path, ...], engine_name: str) -> None:
    """Run a pack's *_test.rego tests (todo_ rules skipped) and its cases; exit 1 on a failure."""
    from trainlint.packs.testing import format_result as format_test_result
    from trainlint.packs.testing import run_pack_tests

    report = run_pack_tests(directory, case_dirs, engine_name)
    for result in report.results:
        click.echo(format_test_result(result))
    click.echo(report.summary())
    sys.exit(EXIT_CLEAN if report.ok else EXIT_FINDINGS)


@main.command()
@handle_errors
def rules() -> None:
    """List the rules of the builtin pack."""
    from trainlint.packs import load_builtin_pack

    for rule in sorted(load_builtin_pack().rules, key=lambda r: r.id):
        summary = first_sentence(rule.description)
        click.echo(f"{rule.id}  {rule.slug:<26} {rule.severity:<8} {summary}")


@main.command()
@handle_errors
def formats() -> None:
    """List the formats trainlint reads, with example file names (docs/formats.md has keys)."""
    from trainlint.formats import catalogue

    for info in catalogue():
        examples = ", ".join(info.examples)
        click.echo(f"{info.name:<16} {info.role:<11} {examples}")


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
@handle_errors
def comment(
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
) -> None:
    """Post the cost-diff comment on a pull request or merge request (GITHUB_TOKEN/GITLAB_TOKEN)."""
    from trainlint.comment import post, sync

    kind, target, number = post.target(host_kind, repo, pr, project, mr)
    host = None if dry_run else post.open_host(kind, target, number, os.environ)
    if body_file is not None:
        body = body_file.read_text(encoding="utf-8")
    else:
        ref = post.base_ref(kind, base, os.environ, host)
        body = post.diff_body(paths, ref, post.link_base(kind, target, os.environ))
    if host is None:
        click.echo(body, nl=not body.endswith("\n"))
        return
    outcome = sync(host, body, post.marker(), post.as_behavior(behavior))
    where = outcome.comment.url if outcome.comment and outcome.comment.url else host.label
    click.echo(f"trainlint: comment {outcome.action}: {where}", err=True)


@main.command()
@click.argument("job_path", type=click.Path(exists=True, path_type=Path))
@click.option("--gpus", type=click.IntRange(min=1), help="The job's world size (default: its own).")
@click.option("--nodes", type=click.IntRange(min=1), help="Nodes (one node only for now).")
@click.option("--world-sizes", "world_sizes", help="Comma-separated sizes (default: 1,<gpus>).")
@click.option("--warmup", type=click.IntRange(min=0), default=3, show_default=True)
@click.option("--steps", type=click.IntRange(min=1), default=10, show_default=True)
@click.option(
    "--mode", type=click.Choice(["synthetic", "entrypoint"]), default="synthetic",
    show_default=True,
)  # fmt: skip
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), help="Folder to write to.")
@click.option(
    "--timeout", "timeout_s", type=click.FloatRange(min=1), default=600.0, show_default=True,
    help="Seconds per world size before every rank is ended.",
)  # fmt: skip
@click.option(
    "--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True
)
@click.option("--layers", type=click.IntRange(min=1), help="Stand-in dimension (synthetic).")
@click.option("--hidden", type=click.IntRange(min=1), help="Stand-in dimension (synthetic).")
@click.option("--heads", type=click.IntRange(min=1), help="Stand-in dimension (synthetic).")
@click.option("--vocab", type=click.IntRange(min=1), help="Stand-in dimension (synthetic).")
@click.option("--seq-len", type=click.IntRange(min=1), help="Stand-in dimension (synthetic).")
@click.option("--micro-batch", type=click.IntRange(min=1), help="Stand-in micro-batch.")
@handle_errors
def probe(
    job_path: Path,
    gpus: int | None,
    nodes: int | None,
    world_sizes: str | None,
    warmup: int,
    steps: int,
    mode: str,
    out: Path | None,
    timeout_s: float,
    device: str,
    **dims: int | None,
) -> None:
    """Measure a job's step time, memory and scaling with short torchrun runs."""
    from rich.console import Console

    from trainlint.probe import probe as run_probe

    sizes = None
    if world_sizes:
        try:
            sizes = [int(part) for part in _split((world_sizes,))]
        except ValueError:
            raise ConfigError(f"--world-sizes {world_sizes!r}: comma-separated integers") from None
    overrides = {k: v for k, v in dims.items() if v is not None}
    err = Console(stderr=True, soft_wrap=True)
    path, result = run_probe(
        job_path, world_sizes=sizes, gpus=gpus, nodes=nodes, warmup=warmup, steps=steps,
        mode=mode, out=out, timeout_s=timeout_s, device=device, overrides=overrides,
        progress=lambda line: err.print(f"trainlint probe: {line}", highlight=False),
    )  # fmt: skip
    for note in result.notes:
        err.print(f"trainlint probe: note: {note}", highlight=False)
    click.echo(f"trainlint: measurement written to {path}")


def first_sentence(text: str) -> str:
    """A rule's one-line summary: the first sentence of its METADATA description."""
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]
