"""``#SBATCH --time`` added where a SLURM script has none (TL no-time-limit), from the run's
estimated hours: the upper end of their range (``Estimates.ranges["run.hours"]``, the point
when the range has no entry) with a margin, never from a guess when the estimate has none."""

from __future__ import annotations

import math
import re

from trainlint.findings import Fix
from trainlint.fix.site import Site

MARGIN = 1.5
"""The limit is the run's upper estimate times this, plus ``STARTUP_HOURS``: a limit a
healthy run never meets, that still ends a hung one within hours."""
STARTUP_HOURS = 0.5
"""Queue-to-first-step time the estimate leaves out: loading the model, the data, NCCL setup."""
ROUND_MINUTES = 15

_SBATCH = re.compile(r"^#SBATCH\s")


def time_limit(site: Site) -> Fix | None:
    """The ``#SBATCH --time`` line after the script's last ``#SBATCH`` line (safe: it ends
    only a run that outlives its upper estimate by half)."""
    hours = upper_hours(site)
    source = site.source(site.job.id)
    if hours is None or source is None or site.job.resources.scheduler != "slurm":
        return None
    header = [n for n in range(1, len(source.lines) + 1) if _SBATCH.match(source.line(n))]
    if not header or any(re.search(r"\s(--time\b|-t\s)", source.line(n)) for n in header):
        return None
    limit = sbatch_time(hours * MARGIN + STARTUP_HOURS)
    edit = source.insert_after(header[-1], f"#SBATCH --time={limit}")
    return Fix(title=f"Set #SBATCH --time={limit}", safe=True, edits=(edit,))


def upper_hours(site: Site) -> float | None:
    """The run's hours at the top of their plausible range; None when not estimated."""
    point = site.job.estimates.run.hours
    if point is None or not math.isfinite(point) or point <= 0:
        return None
    bounds = site.job.estimates.ranges.get("run.hours")
    return max(point, bounds[1]) if bounds else point


def sbatch_time(hours: float) -> str:
    """``hours`` rounded up to ``ROUND_MINUTES``, as sbatch reads it (``D-HH:MM:SS`` past a day)."""
    minutes = math.ceil(hours * 60 / ROUND_MINUTES) * ROUND_MINUTES
    days, minutes = divmod(minutes, 24 * 60)
    clock = f"{minutes // 60:02d}:{minutes % 60:02d}:00"
    return f"{days}-{clock}" if days else clock
