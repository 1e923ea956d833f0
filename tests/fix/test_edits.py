"""The edit machinery on text: which shapes of a debug setting are removed and which are
left alone, fixes that overlap, insertion at a file without a final newline, CRLF kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.findings import Fix, TextEdit
from trainlint.fix.apply import plan
from trainlint.fix.env import removal
from trainlint.fix.slurm import sbatch_time
from trainlint.fix.text import SourceText, apply_edits
from trainlint.job import Location


def _removed(text: str, line: int, column: int, name: str = "NCCL_DEBUG") -> str | None:
    source = SourceText("run.sh", text)
    edit = removal(source, Location(file="run.sh", line=line, column=column), name, "INFO")
    return None if edit is None else apply_edits(source, [edit])


@pytest.mark.parametrize(
    ("text", "line", "column", "expected"),
    [
        ("a=1\nexport NCCL_DEBUG=INFO\nb=2\n", 2, 8, "a=1\nb=2\n"),
        ("a=1\nNCCL_DEBUG=INFO  # hang\nb=2\n", 2, 1, "a=1\nb=2\n"),
        ('export NCCL_DEBUG="INFO"\n', 1, 8, ""),
        ("NCCL_DEBUG=INFO torchrun x.py\n", 1, 1, "torchrun x.py\n"),
        ("export NCCL_DEBUG=INFO OMP=8\n", 1, 8, "export OMP=8\n"),
        ('import os\nos.environ["NCCL_DEBUG"] = "INFO"\n', 2, 1, "import os\n"),
        ("envs:\n  NCCL_DEBUG: INFO\n  OMP: 8\n", 2, 3, "envs:\n  OMP: 8\n"),
        (
            "if x; then\n  export NCCL_DEBUG=INFO\n  export OMP=8\nfi\n",
            2,
            10,
            "if x; then\n  export OMP=8\nfi\n",
        ),
        (
            "env \\\n  NCCL_DEBUG=INFO \\\n  torchrun x.py\n",
            2,
            3,
            "env \\\n  \\\n  torchrun x.py\n",
        ),  # a word of a continued command
    ],
)
def test_debug_setting_removed(text: str, line: int, column: int, expected: str) -> None:
    assert _removed(text, line, column) == expected


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("if x; then\n  export NCCL_DEBUG=INFO\nfi\n", 2, 10),  # the block's only statement
        ("def f():\n    os.environ['NCCL_DEBUG'] = 'INFO'\n\nf()\n", 2, 5),
        ("envs:\n  NCCL_DEBUG: INFO\nrun: x\n", 2, 3),  # the mapping would become null
        ("export NCCL_DEBUG=WARN\n", 1, 8),  # another value than the job's
        ("export NCCL_DEBUG=$LEVEL\n", 1, 8),  # a variable
        ("export NCCL_DEBUG=INFO; torchrun x.py\n", 1, 8),
    ],
)
def test_debug_setting_left_alone(text: str, line: int, column: int) -> None:
    assert _removed(text, line, column) is None


def _fix(path: str, line: int, start: int, end: int, new: str) -> Fix:
    return Fix(title=new, safe=True, edits=(TextEdit(path, line, start, line, end, new),))


def test_overlapping_fixes_keep_the_first(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("a: 1\nb: 2\n")
    first, overlapping = _fix("c.yaml", 1, 4, 5, "10"), _fix("c.yaml", 1, 1, 5, "z: 0")
    other = _fix("c.yaml", 2, 4, 5, "20")
    [fixed] = plan(tmp_path, [overlapping, other, first])
    assert fixed.after == "z: 0\nb: 20\n" and fixed.fixed == 2


def test_insertion_at_an_edit_counts_as_overlap(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("a: 1\n")
    [fixed] = plan(tmp_path, [_fix("c.yaml", 1, 4, 5, "2"), _fix("c.yaml", 1, 5, 5, "3")])
    assert fixed.after == "a: 2\n" and fixed.fixed == 1


def test_line_inserted_after_a_last_line_without_newline_and_crlf_kept() -> None:
    source = SourceText("s", "#SBATCH -N 1")
    assert apply_edits(source, [source.insert_after(1, "#SBATCH --time=01:00:00")]) == (
        "#SBATCH -N 1\n#SBATCH --time=01:00:00"
    )
    crlf = SourceText("s", "#SBATCH -N 1\r\nsrun x\r\n")
    assert apply_edits(crlf, [crlf.insert_after(1, "#SBATCH -t 5")]) == (
        "#SBATCH -N 1\r\n#SBATCH -t 5\r\nsrun x\r\n"
    )


@pytest.mark.parametrize(
    ("hours", "expected"),
    [(0.1, "00:15:00"), (1.0, "01:00:00"), (1.01, "01:15:00"), (30.0, "1-06:00:00")],
)
def test_sbatch_time_rounds_up(hours: float, expected: str) -> None:
    assert sbatch_time(hours) == expected
