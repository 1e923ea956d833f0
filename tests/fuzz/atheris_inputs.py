"""Coverage-guided fuzzing of what a repository hands trainlint besides its training files:
the repository config, a pack's ``.manifest`` and ``data.json``, and shell expansion.

Run: ``python tests/fuzz/atheris_inputs.py -runs=100000`` (libFuzzer flags). The first byte
picks the target, the rest is the input:

- 0-2: a ``.trainlint.yaml``, ``.trainlint.toml`` or ``pyproject.toml`` loaded with
  ``find_config`` (ConfigError is the documented failure);
- 3-4: a pack of that ``.manifest`` and ``data.json`` (split at the first NUL byte), read with
  ``pack_from_files`` and layered over the builtin pack (PolicyError);
- 5: a bash script read with ``parse_script`` (SourceError), whose words and values must stay
  within ``shell.words.ExpansionBudget``.

Any other exception escaping is a crash that libFuzzer reports with the input; so is a broken
bound (an AssertionError). tests/fuzz/test_atheris.py runs a short budget of it in CI when
atheris is installed.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from trainlint.config import find_config
    from trainlint.errors import ConfigError, PolicyError, SourceError
    from trainlint.packs import load_builtin_pack, pack_from_files
    from trainlint.packs.layering import layer
    from trainlint.sources.shell import parse_script
    from trainlint.sources.shell.words import ExpansionBudget

CONFIG_NAMES = [".trainlint.yaml", ".trainlint.toml", "pyproject.toml"]
FOLDER = Path(tempfile.mkdtemp(prefix="trainlint-atheris-inputs-"))
BUILTIN = load_builtin_pack()


def _config(name: str, data: bytes) -> None:
    for old in FOLDER.iterdir():
        old.unlink()
    (FOLDER / name).write_bytes(data)
    with contextlib.suppress(ConfigError):
        find_config(FOLDER)


def _pack(data: bytes) -> None:
    manifest, _, values = data.partition(b"\0")
    files = {".manifest": manifest, "data.json": values} if manifest else {"data.json": values}
    with contextlib.suppress(PolicyError):
        layer([BUILTIN, pack_from_files(files, "fuzz", "fuzz")])


def _shell(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        script = parse_script(text)
    except SourceError:
        return
    words = sum(len(w.text or "") for c in script.commands for w in c.words)
    values = sum(len(a.value or "") for a in script.assignments)
    assert words + values <= 2 * len(text) + ExpansionBudget.for_text(text).left


def one_input(data: bytes) -> None:
    if not data:
        return
    target, rest = data[0] % 6, data[1:]
    if target < 3:
        _config(CONFIG_NAMES[target], rest)
    elif target < 5:
        _pack(rest)
    else:
        _shell(rest)


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
