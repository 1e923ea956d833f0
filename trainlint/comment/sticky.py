"""The sticky PR comment: find ours by its hidden marker and choose what to send.

Host-independent (GitHub and GitLab differ only in endpoints and headers, see ``Host``).
Behaviours follow Infracost's ``comment`` command (reference/policy-tools.md §3.10):

* ``update`` (default): edit the newest comment carrying the marker; create one when there is
  none; send nothing when its body is already the new body (compared with line endings
  normalised and trailing whitespace ignored: hosts store ``\\r\\n`` and may trim). Older
  duplicates are left alone: an edit should not delete history; ``delete-and-new`` cleans up.
* ``new``: always post a new comment.
* ``delete-and-new``: delete every comment carrying the marker, then post a new one.

A comment is ours when its body, after leading whitespace, *starts with* the marker: a reply
that quotes ours (``> <!-- ... -->``) or mentions the marker mid-text is not ours. The body we
send always starts with the marker (prepended when missing), or we would never find it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

Behavior = Literal["update", "new", "delete-and-new"]
BEHAVIORS: tuple[Behavior, ...] = ("update", "new", "delete-and-new")


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    url: str = ""


class Host(Protocol):
    """A PR/MR's comment thread on one host."""

    label: str  # e.g. "owner/name#5" or "group/project!5", for messages

    def list_comments(self) -> list[Comment]: ...
    def create(self, body: str) -> Comment: ...
    def update(self, comment_id: int, body: str) -> Comment: ...
    def delete(self, comment_id: int) -> None: ...


@dataclass(frozen=True)
class Plan:
    """What to send: delete these ids, then update one id, or create (at most one of the two)."""

    delete: tuple[int, ...] = ()
    update: int | None = None
    create: bool = False


@dataclass(frozen=True)
class Outcome:
    action: Literal["created", "updated", "unchanged", "replaced"]
    comment: Comment | None
    deleted: tuple[int, ...] = field(default=())


def with_marker(body: str, marker: str) -> str:
    """``body`` starting with ``marker`` (its own first line when it had to be added)."""
    if not marker.strip():
        raise ValueError("the comment marker must not be empty")
    return body if body.lstrip().startswith(marker) else f"{marker}\n{body}"


def find_ours(comments: Iterable[Comment], marker: str) -> list[Comment]:
    """Comments whose body starts with the marker, in the host's order (oldest first)."""
    return [c for c in comments if c.body.lstrip().startswith(marker)]


def same_body(a: str, b: str) -> bool:
    return _normal(a) == _normal(b)


def plan(ours: list[Comment], body: str, behavior: Behavior) -> Plan:
    """The requests ``behavior`` needs, given our existing comments (oldest first)."""
    if behavior == "new":
        return Plan(create=True)
    if behavior == "delete-and-new":
        return Plan(delete=tuple(c.id for c in ours), create=True)
    if behavior != "update":
        raise ValueError(f"unknown behavior {behavior!r}; expected one of {', '.join(BEHAVIORS)}")
    if not ours:
        return Plan(create=True)
    newest = max(ours, key=lambda c: c.id)
    return Plan() if same_body(newest.body, body) else Plan(update=newest.id)


def sync(host: Host, body: str, marker: str, behavior: Behavior = "update") -> Outcome:
    """Bring the PR's sticky comment to ``body``; lists only when the behaviour needs it."""
    body = with_marker(body, marker)
    ours = [] if behavior == "new" else find_ours(host.list_comments(), marker)
    steps = plan(ours, body, behavior)
    for comment_id in steps.delete:
        host.delete(comment_id)
    if steps.update is not None:
        return Outcome("updated", host.update(steps.update, body))
    if steps.create:
        action: Literal["created", "replaced"] = "replaced" if steps.delete else "created"
        return Outcome(action, host.create(body), steps.delete)
    newest = max(ours, key=lambda c: c.id)
    return Outcome("unchanged", newest)


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()
