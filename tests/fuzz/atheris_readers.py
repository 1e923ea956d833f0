"""Coverage-guided fuzzing of every reader with atheris (optional: ``pip install atheris``).

Run: ``python tests/fuzz/atheris_readers.py -runs=100000`` (libFuzzer flags). Each input is
written under a suffix chosen by its first byte and read with ``read.read_file``, then its
text is handed to each format's reader (``read_document`` forced into the format, on YAML/JSON
suffixes). Any exception escaping is a crash that libFuzzer reports with the input.
tests/fuzz/test_atheris.py runs a short budget of it in CI when atheris is installed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from trainlint.read import read_file
    from trainlint.sources import all_sources, read_document
    from trainlint.sources.base import Input

SUFFIXES = ["yaml", "json", "toml", "sh", "slurm", "py", ""]
FORMATS = [source.name for source in all_sources()]
FOLDER = Path(tempfile.mkdtemp(prefix="trainlint-atheris-"))


def one_input(data: bytes) -> None:
    if not data:
        return
    suffix = SUFFIXES[data[0] % len(SUFFIXES)]
    path = FOLDER / (f"fuzz.{suffix}" if suffix else "fuzz")
    path.write_bytes(data[1:])
    read_file(path)
    if suffix in ("yaml", "json"):
        text = data[1:].decode("utf-8", errors="replace")
        read_document(Input(path.name, text), forced=FORMATS[data[0] % len(FORMATS)])


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
