"""``trainlint server``: the language server over stdio (pygls only through
``trainlint[server]``)."""

from __future__ import annotations

import click

from trainlint.cli.base import collect_rarely, handle_errors, main
from trainlint.errors import ConfigError


@main.command()
@click.option("--stdio", is_flag=True, help="Talk LSP over stdin/stdout (the only transport).")
@handle_errors
def server(stdio: bool) -> None:
    """Run the language server: diagnostics, hovers with estimates, fixes and suppressions."""
    try:
        from trainlint.server.app import build_server
    except ImportError as exc:
        raise ConfigError(
            f"the language server needs pygls ({exc.name} is missing): "
            "pip install 'trainlint[server]'"
        ) from None
    collect_rarely()  # a long run: garbage must not pile up check after check
    build_server().start_io()
