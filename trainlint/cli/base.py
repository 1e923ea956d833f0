"""What every command shares: the ``main`` group, exit codes and the one error handler.

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
from typing import Any, TypeVar

import click

from trainlint import __version__
from trainlint.errors import TrainlintError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_CRASH, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="trainlint")
def main() -> None:
    """Policy-as-code linter for ML training jobs."""


def split_values(values: tuple[str, ...]) -> list[str]:
    """Repeatable options that also take comma-separated lists: ``--select A,B --select C``."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def collect_never() -> None:
    """A check allocates millions of small objects (parsed documents, facts, jobs) that live
    until the report is written, and the collector rescans them while they pile up for
    almost no garbage: reference cycles are rare here and all is freed at exit. Collecting
    took 0.12 s of a 1,000-file check (2.6 s) and 0.3 s of a 5,000-file one (17 s), whose
    peak memory is the same without it (262 MB; docs/benchmarks.md). What runs for long
    (``--watch``, ``server``) collects again (``collect_rarely``)."""
    gc.disable()


def collect_rarely() -> None:
    """For a process that runs many checks: the objects alive now are frozen out of
    collection and the young generation is collected every 50,000 allocations (CPython's
    default rescans a check's objects ever more often as they pile up: 0.14 s of a
    1,000-file check, 0.04 s with this setting); reference cycles are still collected.
    Forked workers inherit the setting."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    gc.enable()
