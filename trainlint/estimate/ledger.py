"""Values with their source, and the ledger one estimate call writes sources and gaps into.

Every number in ``Estimates`` carries where it came from (DESIGN §1): copied from the config
(``declared``), looked up (``catalog``), computed (``estimated``), or driven by an assumption
(``default``), or stated by the org fleet (``fleet``, ``trainlint.fleet``). A computed value
inherits ``default`` from any assumed input, else ``fleet`` from any input the fleet gave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from trainlint.job import Source

T = TypeVar("T")


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """A resolved input and where it came from (its ``Source``): ``Sourced[int]`` is an int
    whose source an estimate inherits. Not a ``sources.base.Fact``, which is what a file
    states and where; this is a figure the estimator resolved, from a file or a catalog."""

    value: T
    source: Source


def derived(*sources: Source) -> Source:
    """The source of a value computed from inputs with these sources."""
    if "default" in sources:
        return "default"
    return "fleet" if "fleet" in sources else "estimated"


@dataclass
class Ledger:
    """Sources of the values produced so far and the names of inputs found missing.

    Local to one ``estimate`` call, so the public function stays pure.
    """

    sources: dict[str, Source] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)

    def missing(self, *names: str) -> None:
        """Record inputs whose absence left a value unknown (each name once, in order)."""
        for name in names:
            if name not in self.unknown:
                self.unknown.append(name)

    def put(self, key: str, value: T | None, source: Source) -> T | None:
        """Record ``value``'s source under ``key`` when it is known; return the value."""
        if value is not None:
            self.sources[key] = source
        return value
