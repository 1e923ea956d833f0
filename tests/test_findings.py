"""Locating findings through provenance, and ruff-style rule selection."""

from __future__ import annotations

import pytest

from trainlint.findings import at_or_above, locate, make_finding, selected
from trainlint.job import Job, Location, SourceFile


def job() -> Job:
    return Job(
        id="run.sh",
        sources=[SourceFile(path="run.sh", format="launch-script", role="entrypoint")],
        provenance={
            "/checkpoint/every_steps": Location(file="cfg.yaml", line=9, column=1),
            "/env/NCCL_DEBUG": Location(file="run.sh", line=4, column=8),
        },
    )


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("/checkpoint/every_steps", ("cfg.yaml", 9, 1)),  # exact
        ("/checkpoint/every_steps/extra", ("cfg.yaml", 9, 1)),  # nearest ancestor
        ("/env", ("run.sh", 4, 8)),  # a located descendant
        ("/tags", ("run.sh", 1, 1)),  # nothing set it: the entry file
        ("", ("run.sh", 1, 1)),
    ],
)
def test_locate(pointer: str, expected: tuple[str, int, int]) -> None:
    where = locate(job(), pointer)
    assert (where.file, where.line, where.column) == expected


def test_make_finding_carries_waste_and_job() -> None:
    raw = {
        "message": "m",
        "pointer": "/checkpoint/every_steps",
        "waste": {"gpu_hours": 2.5, "usd": 10.0},
    }
    finding = make_finding(job(), "TL201", "checkpoint-too-frequent", "warning", raw)
    assert (finding.file, finding.line, finding.job) == ("cfg.yaml", 9, "run.sh")
    assert finding.waste is not None and finding.waste.usd == 10.0


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [
        ((), (), True),
        ((), ("TL201",), False),
        ((), ("TL2",), False),
        ((), ("checkpoint-too-frequent",), False),
        (("TL201",), ("TL2",), True),  # the longer selector wins
        (("TL2",), ("TL201",), False),
        (("TL3",), (), False),
        (("checkpoint-too-frequent",), ("TL",), True),
        (("tl2",), (), True),
    ],
)
def test_selection(select: tuple[str, ...], ignore: tuple[str, ...], expected: bool) -> None:
    assert selected("TL201", "checkpoint-too-frequent", select, ignore) is expected


def test_fail_on_threshold() -> None:
    info = make_finding(job(), "TL301", "log-every-step", "info", {"message": "m", "pointer": ""})
    assert at_or_above([info], "info")
    assert not at_or_above([info], "warning")
    assert not at_or_above([], "info")


def test_a_range_and_a_point_of_one_estimate_are_the_same_finding() -> None:
    """An estimate reads as a range at one revision and as a point at another: same identity."""
    from trainlint.findings import fingerprint

    ranged = fingerprint(
        "TL201", "/checkpoint/every_steps", "is ~22\u201337% of the run; ~$40\u2013160"
    )
    point = fingerprint("TL201", "/checkpoint/every_steps", "is ~70% of the run; ~$96")
    assert ranged == point
    assert ranged != fingerprint("TL201", "/checkpoint/every_steps", "is ~70% of the step")
