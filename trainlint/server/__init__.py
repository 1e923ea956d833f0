"""``trainlint server``: a language server over stdio (pygls) for any LSP client.

Only this package imports pygls and lsprotocol (an import contract keeps them out of the
linter core, so ``pip install trainlint`` never needs them: they come with
``trainlint[server]``). ``session`` runs checks over the workspace with the editor's unsaved
buffers read in place of the files (``lint.CheckOptions.overlay``); ``features`` turns a
report into diagnostics, hovers and code actions, as pure functions; ``app`` wires both to
the protocol.
"""

from __future__ import annotations
