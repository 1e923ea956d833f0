"""``trainlint probe``: short measured runs of a job (torch only through ``trainlint[probe]``)."""

from __future__ import annotations

from pathlib import Path

import click

from trainlint.cli.base import handle_errors, main, split_values
from trainlint.errors import ConfigError


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
def probe(  # noqa: PLR0913 - a click command: one parameter per option
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
            sizes = [int(part) for part in split_values((world_sizes,))]
        except ValueError:
            raise ConfigError(f"--world-sizes {world_sizes!r}: comma-separated integers") from None
    overrides = {k: v for k, v in dims.items() if v is not None}
    err = Console(stderr=True, soft_wrap=True)
    path, result = run_probe(
        job_path, world_sizes=sizes, gpus=gpus, nodes=nodes, warmup=warmup, steps=steps,
        mode=mode, out=out, timeout_s=timeout_s, device=device, overrides=overrides,
        progress=lambda line: err.print(f"trainlint probe: {line}", highlight=False, markup=False),
    )  # fmt: skip
    for note in result.notes:
        err.print(f"trainlint probe: note: {note}", highlight=False, markup=False)
    click.echo(f"trainlint: measurement written to {path}")
