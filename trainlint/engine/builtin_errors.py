"""OPA's non-strict builtin errors: a builtin that fails makes its expression undefined.

OPA (``rego.StrictBuiltinErrors(false)``, its default) and regopy (``strict_built_in_errors``,
off by default) treat ``startswith(null, "x")``, ``count(null)``, ``to_number("x")`` or a
division by zero as undefined: that rule body does not match, every other rule still runs.
regorus raises instead, and its Python binding has no switch for it (0.13: no
``set_strict_builtin_errors``), so one bad expression in one pack rule stopped the whole job.

Here a regorus evaluation that fails on a builtin is evaluated again rule by rule; a rule whose
evaluation fails on a builtin is undefined for that job (no findings), and a notice says so on
stderr (logger ``trainlint.engine``, once per rule and error). That is coarser than OPA, which
drops only the failing body's solution: the rule's other findings for that job are lost too,
and the notice says that. Errors OPA raises too (conflicting values, unsafe variables, unknown
functions, limits) stay errors.
"""

from __future__ import annotations

import logging
import re

from trainlint.errors import PolicyError

log = logging.getLogger("trainlint.engine")

_BUILTIN_FAILURE = re.compile(
    r"`[\w.]+` (?:expects|requires)\b"  # `startswith` expects string argument. Got `null`
    r"|\bexpects (?:string|numeric|array|object|set|integer|bool)"
    r"|could not (?:parse|convert)"  # to_number("x"), units.parse_bytes("zz")
    r"|invalid (?:regex|glob|semver)"
    r"|(?:divide|modulo) by zero|modulo on floating-point|negative offset"
)


def is_builtin_error(error: PolicyError | str) -> bool:
    """Whether an evaluation error is a builtin's failure on its arguments (OPA: undefined)."""
    return _BUILTIN_FAILURE.search(str(error)) is not None


class Notices:
    """Says once per (rule, error) that a rule was undefined for a job because of a builtin."""

    def __init__(self, engine: str) -> None:
        self._engine = engine
        self._said: set[tuple[str, str]] = set()

    def undefined(self, rule: str, job: object, error: PolicyError) -> None:
        message = str(error)
        if (rule, message) in self._said:
            return
        self._said.add((rule, message))
        log.warning(
            "%s: %s is undefined for job %s (and any other job that hits this): %s; OPA treats "
            "a builtin's error as undefined, so the rule's other findings for that job are "
            "not reported either",
            self._engine, rule, job, message.removeprefix(f"{self._engine}: "),
        )  # fmt: skip
