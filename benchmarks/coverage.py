"""How often estimates speak: of the jobs whose model size is known, the share that get a memory
utilization and the share that get a step time (point and range). Issue 21's acceptance: with
only ``[fleet] default-gpu = "H100-SXM"`` at the corpus root, >= 95% and >= 90%.

Run:  python benchmarks/coverage.py CORPUS [--gpu H100-SXM]
The jobs load as ``trainlint estimate`` loads them (the corpus's own configuration applies);
``--gpu`` gives every job whose GPU is unknown that catalog GPU first (source ``default``), the
same as an org's default GPU, for trees without one configured. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from trainlint.estimate import EstimateParams, RuleLimits, estimate
from trainlint.job import Job
from trainlint.lint import load_jobs
from trainlint.packs import load_builtin_pack


@dataclass(frozen=True)
class Coverage:
    sized: int  # jobs whose parameter count is known
    memory: int  # of those, with a memory utilization
    step: int  # of those, with a step time and its range

    def lines(self) -> list[str]:
        def share(count: int) -> str:
            return f"{count}/{self.sized} ({100 * count / max(1, self.sized):.1f}%)"

        return [
            f"jobs with a known model size: {self.sized}",
            f"memory utilization: {share(self.memory)}",
            f"step time (point and range): {share(self.step)}",
        ]


def with_default_gpu(jobs: list[Job], gpu: str) -> list[Job]:
    """Each job whose GPU is unknown re-estimated on ``gpu``, as an org default would."""
    pack = load_builtin_pack()
    params, limits = EstimateParams.of(pack.data, pack.name), RuleLimits.of(pack.data)
    filled = []
    for job in jobs:
        if job.estimates.gpu is None and not job.resources.gpu.model:
            job = job.model_copy(deep=True)
            job.resources.gpu.model, job.resources.gpu.source = gpu, "default"
            job.estimates = estimate(job, params, limits)
        filled.append(job)
    return filled


def coverage(jobs: list[Job]) -> Coverage:
    sized = [job.estimates for job in jobs if job.estimates.params is not None]
    memory = sum(1 for e in sized if e.memory.utilization is not None)
    step = sum(1 for e in sized if e.step_time_s is not None and "/step_time_s" in e.ranges)
    return Coverage(len(sized), memory, step)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--gpu", help="catalog GPU for jobs whose GPU is unknown")
    args = parser.parse_args()
    jobs = load_jobs([args.corpus])
    if args.gpu:
        jobs = with_default_gpu(jobs, args.gpu)
    print("\n".join(coverage(jobs).lines()))


if __name__ == "__main__":
    main()
