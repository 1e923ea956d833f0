"""A hang guard for tests that read what might block (a FIFO, a device, a runaway rule)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def within(seconds: float, work: Callable[[], Any]) -> Any:
    """``work()``'s result, or the exception it raised; fails instead of hanging the suite
    when it blocks (a FIFO opened for reading blocks forever). A guard, not a timing
    assertion."""
    outcome: list[Any] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as error:  # handed to the caller's thread
            failure.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"did not finish within {seconds} s"
    if failure:
        raise failure[0]
    return outcome[0]
