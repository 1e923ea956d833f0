"""The protocol side: a pygls ``LanguageServer`` whose handlers call ``Session`` and
``features``.

Positions: ``features`` counts characters as trainlint does (code points); the client counts
in the encoding negotiated at initialize (UTF-16 unless it offers another), so every range
and position crosses ``to_client``/``from_client`` here.

A check runs on open and save at once and on change after the typing pauses
(``SETTLE_S``: each change starts a wait and only the last one checks), in the server's
thread: checks change the working directory (``workdir.at_root``) and may fork workers, so
one runs at a time and nothing else runs beside it. Diagnostics are published for every file
with findings, open or not (a launch flag's finding lands in the script), and emptied for a
file whose findings went away; a file's are sent only when they changed (a keystroke in one
config of a big workspace re-sends that job's files, not every file with a finding).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from trainlint import __version__
from trainlint.errors import TrainlintError
from trainlint.server import features
from trainlint.server.session import Session, uri_paths

SETTLE_S = 0.3
"""How long typing must pause before a change is checked (a whole-workspace check each)."""


class TrainlintServer(LanguageServer):
    """The server with its session and what it last published."""

    def __init__(self) -> None:
        super().__init__("trainlint", __version__)
        self.session = Session()
        self.published: dict[Path, list[types.Diagnostic]] = {}
        """What the client shows per file: only what changed is sent again."""
        self.changes = 0


def build_server() -> TrainlintServer:
    server = TrainlintServer()
    _register_documents(server)
    _register_requests(server)
    return server


def _path(uri: str) -> Path | None:
    """A ``file:`` URI's path; None for any other scheme (pygls's ``to_fs_path``): an
    untitled buffer or a diff view's ``git:`` side, which no check reads."""
    path = to_fs_path(uri)
    return Path(path) if path else None


def _register_documents(server: TrainlintServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TrainlintServer, params: types.DidOpenTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.session.open(path, params.text_document.text)
            publish(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TrainlintServer, params: types.DidChangeTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is None:
            return
        ls.session.open(path, ls.workspace.get_text_document(params.text_document.uri).source)
        ls.changes += 1
        seen = ls.changes
        await asyncio.sleep(SETTLE_S)
        if seen == ls.changes:  # the last change of a burst
            publish(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TrainlintServer, params: types.DidSaveTextDocumentParams) -> None:
        publish(ls)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TrainlintServer, params: types.DidCloseTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None:
            ls.session.close(path)  # the file on disk counts again
            publish(ls)


def _register_requests(server: TrainlintServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TrainlintServer, params: types.HoverParams) -> types.Hover | None:
        path = _path(params.text_document.uri)
        if path is None:
            return None
        position = from_client(ls, path, params.position)
        text = features.hover(ls.session, path, position.line + 1, position.character)
        if text is None:
            return None
        content = types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
        return types.Hover(contents=content)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(
        ls: TrainlintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        path = _path(params.text_document.uri)
        if path is None:
            return None
        first, last = params.range.start.line + 1, params.range.end.line + 1
        actions = features.code_actions(ls.session, path, first, last)
        for action in actions:
            _edits_to_client(ls, action)
        return actions


def publish(ls: TrainlintServer) -> None:
    """Check the workspace and publish each file's diagnostics; a configuration the check
    refuses is shown as a message, the last diagnostics kept."""
    ls.session.folders = _folders(ls)
    try:
        report = ls.session.check()
    except TrainlintError as exc:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"trainlint: {exc}")
        )
        return
    for error in report.errors:
        ls.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Warning, message=f"{error.job}: {error.message}"
            )
        )
    files = ls.session.files_with_findings() | set(ls.session.buffers)
    shown: dict[Path, list[types.Diagnostic]] = {}
    for path in sorted(files | set(ls.published)):
        found = features.diagnostics(ls.session.findings(path), ls.session.text(path), report.rules)
        for diagnostic in found:
            diagnostic.range = to_client(ls, path, diagnostic.range)
        if path in files:
            shown[path] = found
        if ls.published.get(path) != found or path in ls.session.buffers:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=path.as_uri(), diagnostics=found)
            )
    ls.published = shown


def _folders(ls: TrainlintServer) -> list[Path]:
    """The client's workspace folders as they are now (pygls follows their changes), else
    its root; none: ``Session.paths`` checks each open file's project root."""
    folders = uri_paths([folder.uri for folder in ls.workspace.folders.values()])
    if not folders and ls.workspace.root_uri:
        folders = uri_paths([ls.workspace.root_uri])
    return folders


def _edits_to_client(ls: TrainlintServer, action: types.CodeAction) -> None:
    """An action's edits in the client's units, each counted in the file it edits."""
    changes = action.edit.changes if action.edit is not None else None
    for uri, edits in (changes or {}).items():
        target = _path(uri)
        if target is None:
            continue
        for edit in edits:
            edit.range = to_client(ls, target, edit.range)


def to_client(ls: TrainlintServer, path: Path, where: types.Range) -> types.Range:
    """A range in characters as the client counts them (UTF-16 units by default)."""
    lines = ls.session.text(path).splitlines(keepends=True)
    return ls.workspace.position_codec.range_to_client_units(lines, where)


def from_client(ls: TrainlintServer, path: Path, where: types.Position) -> types.Position:
    """A client's position in characters (code points), as trainlint counts columns."""
    lines = ls.session.text(path).splitlines(keepends=True)
    found = ls.workspace.position_codec.position_from_client_units(lines, where)
    return types.Position(found.line, found.character)
