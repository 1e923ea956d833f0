"""The host-independent part: which comments are ours and what each behaviour sends."""

from __future__ import annotations

import pytest

from trainlint.comment.sticky import (
    Behavior,
    Comment,
    Plan,
    find_ours,
    plan,
    same_body,
    with_marker,
)

M = "<!-- trainlint-comment -->"


def test_ours_start_with_the_marker_quotes_and_mentions_are_not() -> None:
    comments = [
        Comment(1, f"{M}\nold"),
        Comment(2, f"> {M}\n> quoted by a reviewer"),
        Comment(3, f"what does {M} mean?"),
        Comment(4, f"\n{M}\nnewer"),
    ]
    assert [c.id for c in find_ours(comments, M)] == [1, 4]


def test_update_edits_the_newest_and_leaves_older_duplicates() -> None:
    ours = [Comment(9, f"{M}\na"), Comment(3, f"{M}\nb")]
    assert plan(ours, f"{M}\nc", "update") == Plan(update=9)


def test_update_sends_nothing_when_only_line_endings_differ() -> None:
    ours = [Comment(9, f"{M}\r\nsame  \r\n")]
    assert plan(ours, f"{M}\nsame\n", "update") == Plan()  # nothing to send
    assert not same_body(f"{M}\nsame", f"{M}\nsame!")


@pytest.mark.parametrize(
    ("behavior", "expected"),
    [
        ("new", Plan(create=True)),
        ("delete-and-new", Plan(delete=(1, 2), create=True)),
        ("update", Plan(update=2)),
    ],
)
def test_behaviours(behavior: Behavior, expected: Plan) -> None:
    ours = [Comment(1, f"{M}\na"), Comment(2, f"{M}\nb")]
    assert plan(ours, f"{M}\nc", behavior) == expected


def test_no_comment_yet_creates_one() -> None:
    assert plan([], f"{M}\nc", "update") == Plan(create=True)


def test_the_marker_is_prepended_when_the_body_lacks_it() -> None:
    assert with_marker("body", M) == f"{M}\nbody"
    assert with_marker(f"{M}\nbody", M) == f"{M}\nbody"
    with pytest.raises(ValueError, match="marker"):
        with_marker("body", " ")
