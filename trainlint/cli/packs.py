"""``trainlint pack``: build, inspect, test, sign and verify policy packs (OPA bundles)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from trainlint import engine as engines
from trainlint.cli.base import EXIT_CLEAN, EXIT_FINDINGS, handle_errors, main

# signing.ALGORITHMS, spelled out so that `check` never imports PyJWT (a test keeps them equal).
SIGNING_ALGORITHMS = ("RS256", "ES256", "HS256")
_ALGORITHMS = click.Choice(list(SIGNING_ALGORITHMS))
_KEY_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


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


@pack.command("add-rule")
@click.argument("name")
@click.option("--dir", "directory", default=Path("."), show_default=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The pack to add the rule to.")  # fmt: skip
@handle_errors
def pack_add_rule(name: str, directory: Path) -> None:
    """Add rule NAME (a slug): module with METADATA, unit tests, params, cases, manifest roots."""
    from trainlint.packs import scaffold

    ident, written = scaffold.add_rule(directory, name)
    click.echo(f"Added rule {ident} ({name}) to {directory}:")
    for path in written:
        click.echo(f"  {path}")


@pack.command("build")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The .tar.gz bundle to write.")  # fmt: skip
@click.option("--key", "key_file", type=_KEY_FILE,
              help="Re-sign with this private key (or secret file) when the files changed "
              "since signing; without it a stale signature is refused.")  # fmt: skip
@click.option("--algorithm", type=_ALGORITHMS, help="[default: the old signature's]")
@handle_errors
def pack_build(directory: Path, output: Path, key_file: Path | None, algorithm: str | None) -> None:
    """Build DIRECTORY into a deterministic .tar.gz bundle (sign first to ship it signed)."""
    import hashlib

    from trainlint.packs import bundle, signing

    key = key_file.read_bytes() if key_file else None
    if signing.refresh_for_build(directory, key, algorithm):
        click.echo(f"Re-signed {directory} (files changed since signing).")
    members = bundle.build(directory, output)
    digest = hashlib.sha256(output.read_bytes()).hexdigest()
    click.echo(f"Built {output} ({len(members)} files), sha256 {digest}")


@pack.command("inspect")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)  # fmt: skip
@click.option("--key", "key_file", type=_KEY_FILE,
              help="Public key (or secret file) to verify the signature with.")  # fmt: skip
@handle_errors
def pack_inspect(path: Path, fmt: str, key_file: Path | None) -> None:
    """Show a pack (directory or .tar.gz): name, revision, roots, rules, params, locks, and
    whether its files match its signature (verified with --key)."""
    import json

    from trainlint.packs import describe_pack, render_description

    desc = describe_pack(path, key_file.read_bytes() if key_file else None)
    text = json.dumps(desc, indent=2) + "\n" if fmt == "json" else render_description(desc)
    click.echo(text, nl=False)


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
