"""One query that evaluates each rule's ``findings`` and nothing else (issue 9).

Querying ``data.trainlint.rules`` asks for every rule package's whole document, so every helper
rule (``_message``, ``_applies``, ``params``...) is evaluated for every job although only
``findings`` is read; for the builtin pack that was over half the evaluation time. The embedded
backends add this generated module and query it instead: an object of each rule package's
findings, keyed like ``data.trainlint.rules`` (``{"no_seed": {"findings": [...]}}``), so
``results.findings_by_rule`` reads either. A package without a ``findings`` rule is left out,
as it was from the package document. ``findings`` is a complete rule, so regorus can evaluate
it by path (``eval_rule``), skipping the parse and plan of a query on every job. Its package is
the engine's: a pack module in it (or below it) could add entries to the collector or shadow
them, so such a pack is refused.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainlint.errors import PolicyError

PACKAGE = "trainlint_engine"
FILE = "trainlint_engine/findings.rego"
QUERY = f"data.{PACKAGE}.findings"


def collector_module(rule_packages: Iterable[str]) -> str:
    """The generated module for these packages (``trainlint.rules.no_seed``...), one line each:
    regorus refuses lines over 1,024 columns."""
    packages = sorted(set(rule_packages))
    lines = [f"package {PACKAGE}", "", "import rego.v1", ""]
    if not packages:  # a pack of helpers or conftest rules only
        return "\n".join([*lines, "findings := {}"]) + "\n"
    lines += ['findings := {name: {"findings": value} | some name, value in _by_rule}', ""]
    for package in packages:
        short = package.rsplit(".", 1)[-1]
        lines.append(f'_by_rule["{short}"] := data.{package}.findings')
    return "\n".join(lines) + "\n"


def refuse_reserved(packages: dict[str, str]) -> None:
    """PolicyError when a module (file -> package) sits at or below ``PACKAGE``."""
    for file, package in sorted(packages.items()):
        if package == PACKAGE or package.startswith(PACKAGE + "."):
            raise PolicyError(f"{file}: package {package} is reserved for trainlint's engine")
