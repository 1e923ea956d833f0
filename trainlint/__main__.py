"""``python -m trainlint``, with the current directory taken off ``sys.path`` first.

``-m`` puts the current directory at the front of ``sys.path``; in CI that is the checked
repository, whose ``regorus.py``, ``yaml.py`` or ``*.dist-info`` pack entry point would then be
imported in place of the installed ones, running its code. So the directory (as ``''`` or as
its path) is dropped before anything else is imported: only ``sys`` and ``os``, which Python
loaded before this file, are used until then. The ``trainlint`` console script never has it.
What this cannot stop: a ``trainlint.py`` or ``trainlint/`` in the current directory, which
Python imports instead of the package before this file runs; CI runs ``trainlint`` (or
``python -P -m trainlint``) for that reason.
"""

import os
import sys


def drop_current_directory() -> None:
    """Remove every ``sys.path`` entry that names the current directory."""
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:  # the directory was removed: only '' can still name it
        here = None
    sys.path[:] = [
        entry for entry in sys.path if entry and (here is None or os.path.realpath(entry) != here)
    ]


if __name__ == "__main__":
    drop_current_directory()
    from trainlint.cli import run

    run()
