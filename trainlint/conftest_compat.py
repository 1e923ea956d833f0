"""Conftest compatibility: existing conftest policies run unchanged against the job model.

Semantics follow conftest (``docs/index.md``, ``policy/engine.go``, ``runner/test.go``):

- a rule whose name matches ``^(deny|violation)(_[a-zA-Z0-9]+)*$`` is a failure (reported as
  ``error``), ``^warn(_[a-zA-Z0-9]+)*$`` a warning;
- a rule is a set (or array) of strings, or of objects with a string ``msg`` (a missing or
  non-string ``msg`` is an error, as in conftest); the empty string is a pass; values of other
  kinds are ignored, as conftest ignores them; a rule that is ``true`` (``deny if {...}``, no
  ``contains``) is an error, as conftest refuses such a rule when it loads;
- an object may say where the problem is: ``pointer`` (a JSON pointer into the job, located
  through provenance like a builtin finding) or conftest's ``_loc: {file, line}`` (used as
  is, column 1); the other keys are the finding's metadata;
- ``exception contains rules if {... rules := ["fp32"]}`` in the namespace exempts
  ``deny_fp32`` / ``warn_fp32`` / ``violation_fp32``; ``""`` exempts the bare ``deny`` /
  ``warn`` / ``violation`` (conftest's ``removeRulePrefix``); exempted results are dropped;
- namespaces: ``main`` by default, ``--namespace`` (repeatable; a shell-style glob such as
  ``org.*`` matches the pack's packages), ``--all-namespaces`` (every package of the pack).
  Each namespace is a package path without ``data.`` (``org.training``).

In a pack the input is the job model (``Job.as_input()``), not the raw files: a policy reads
``input.training.precision``, whatever format set it. In conftest mode (``check --conftest
DIR``, ``FileMode``) a policy directory's rules see each YAML, JSON or TOML file as conftest
parses it, one input per document (``conftest_input``), so ``input.kind == "PyTorchJob"``
holds on a PyTorchJob manifest; a finding sits at its document's first line, or at the value
its ``pointer`` names.

Rule ids: a conftest rule has no TLxxx id, so a finding's ``rule`` (and ``name``) is
``<namespace>.<rule>`` (``main.deny``, ``org.training.warn_fp32``). That is what conftest prints
next to each failure, it is unique and stable for as long as the policy keeps its package and
rule name, it selects exactly one rule by exact match (trainlint's selection treats a non-TL
key as a slug), and SARIF gets one ``ruleId`` per conftest rule, so code scanning groups the
alerts of each policy separately. A single ``CONFTEST`` id would merge every policy into one
SARIF rule and could not suppress one policy without the others.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from trainlint.conftest_input import Input, is_input, read_inputs
from trainlint.errors import ConfigError, PolicyError
from trainlint.findings import Finding, Waste, fingerprint, locate
from trainlint.job import Job, Location
from trainlint.packs import Pack, load_pack, module_package, with_rego_v0
from trainlint.read import display

if TYPE_CHECKING:
    from trainlint.engine import Engine

DEFAULT_NAMESPACE = "main"
FAILURE = re.compile(r"^(?:deny|violation)(?:_[a-zA-Z0-9]+)*$")
WARNING = re.compile(r"^warn(?:_[a-zA-Z0-9]+)*$")
_RULE_HEAD = re.compile(
    r"^(?:default[ \t]+)?(?P<name>(?:deny|violation|warn)(?:_[a-zA-Z0-9]+)*|exception)"
    r"(?=[ \t]*(?:\[|\{|:=|=|\bcontains\b|\bif\b|$))",
    re.MULTILINE,
)
_PREFIX = re.compile(r"^(?:deny|warn|violation)_")
_GLOB = re.compile(r"[*?\[]")

Query = Callable[[dict[str, Any], str], Any]
"""``Engine.query``: (job input, ``data.x.y`` reference) → value, None when undefined."""


@dataclass(frozen=True)
class ConftestResult:
    """One failure or warning of a conftest rule for one job."""

    rule: str  # <namespace>.<rule>, e.g. main.deny_fp32: the finding's rule id
    namespace: str
    severity: Literal["error", "warning"]
    message: str
    query: str  # data.main.deny_fp32
    pointer: str | None = None
    location: Location | None = None  # from conftest's _loc
    metadata: dict[str, Any] = field(default_factory=dict)


def conftest_namespaces(pack: Pack) -> list[str]:
    """Every package of the pack's modules, in file order (conftest's ``Namespaces``)."""
    found = (module_package(source) for _, source in sorted(pack.modules.items()))
    return list(dict.fromkeys(ns for ns in found if ns))


def conftest_rules(pack: Pack) -> dict[str, list[str]]:
    """Namespace → the conftest rule names its modules define (deny/violation/warn...,
    and ``exception`` when the namespace declares exceptions)."""
    rules: dict[str, list[str]] = {}
    for _, source in sorted(pack.modules.items()):
        namespace = module_package(source)
        if namespace:
            names = rules.setdefault(namespace, [])
            names.extend(m["name"] for m in _RULE_HEAD.finditer(source) if m["name"] not in names)
    return rules


def select_namespaces(
    pack: Pack, namespaces: Sequence[str] = (), all_namespaces: bool = False
) -> list[str]:
    """The namespaces to evaluate, as conftest picks them.

    Globs match the pack's packages. A plain name is kept even when the local pack lacks it
    (an OPA server may hold it), except the implicit default ``main``, which is only
    evaluated when the pack has it, so a pack without conftest policies costs no query.
    """
    available = conftest_namespaces(pack)
    if all_namespaces:
        return available
    if not namespaces:
        return [DEFAULT_NAMESPACE] if DEFAULT_NAMESPACE in available else []
    chosen: list[str] = []
    for pattern in namespaces:
        if _GLOB.search(pattern):
            chosen.extend(ns for ns in available if fnmatch.fnmatchcase(ns, pattern))
        else:
            chosen.append(pattern.removeprefix("data."))
    return list(dict.fromkeys(chosen))


def conftest_findings(
    engine_query: Query,
    job_input: dict[str, Any],
    namespaces: Sequence[str],
    rules: Mapping[str, Sequence[str]] | None = None,
) -> list[ConftestResult]:
    """Evaluate the conftest rules of ``namespaces`` for one job.

    ``rules`` (from ``conftest_rules``) names each namespace's rules so that only they are
    queried; a namespace it does not list is read whole (``data.<ns>``) and its rules are
    found by name, which also reaches policies that only a remote OPA server holds.
    """
    results: list[ConftestResult] = []
    for namespace in namespaces:
        names = rules.get(namespace) if rules is not None else None
        if names is None:
            values = _namespace_rules(engine_query(job_input, f"data.{namespace}"))
            excepted = _exceptions(values.pop("exception", None))
        elif not names:
            continue
        else:
            values = {name: engine_query(job_input, f"data.{namespace}.{name}") for name in names}
            excepted = _exceptions(values.pop("exception", None))
        for name, value in values.items():
            if _exception_key(name) in excepted:
                continue
            results.extend(_results(namespace, name, value))
    return sorted(results, key=lambda r: (r.namespace, r.rule, r.message))


def conftest_rule_ids(
    pack: Pack, namespaces: Sequence[str] = (), all_namespaces: bool = False
) -> list[str]:
    """The ids (``main.deny``) of the conftest rules the local pack defines in the selected
    namespaces: for suppression comments and selectors that name a conftest rule."""
    chosen = select_namespaces(pack, namespaces, all_namespaces)
    rules = conftest_rules(pack) if chosen else {}
    return [f"{ns}.{name}" for ns in chosen for name in rules.get(ns, [])]


@dataclass(frozen=True)
class ConftestPlan:
    """What conftest evaluation needs from the pack, read once per run rather than per job
    (finding the namespaces scans every module's source); ``findings`` runs it on one job."""

    namespaces: list[str]
    rules: dict[str, list[str]]

    @classmethod
    def of(
        cls, pack: Pack, namespaces: Sequence[str] = (), all_namespaces: bool = False
    ) -> ConftestPlan:
        chosen = select_namespaces(pack, namespaces, all_namespaces)
        return cls(chosen, conftest_rules(pack) if chosen else {})

    def findings(self, engine: Engine, job: Job) -> list[Finding]:
        """Located findings of the chosen namespaces for one job (next to ``engine.evaluate``)."""
        if not self.namespaces:
            return []
        results = conftest_findings(engine.query, job.as_input(), self.namespaces, self.rules)
        return [to_finding(job, result) for result in results]


def to_finding(job: Job, result: ConftestResult) -> Finding:
    """A conftest result as a trainlint finding: ``_loc`` as is, else the pointer's location."""
    pointer = result.pointer or ""
    where = result.location or locate(job, pointer)
    waste = result.metadata.get("waste")
    return Finding(
        rule=result.rule, name=result.rule, severity=result.severity, message=result.message,
        file=where.file, line=where.line, column=where.column, job=job.id,
        waste=Waste.model_validate(waste) if _is_waste(waste) else None,
        fingerprint=fingerprint(result.rule, pointer or f"_loc:{where.file}", result.message),
    )  # fmt: skip


def _exception_key(name: str) -> str:
    """``deny_fp32`` → ``fp32``, bare ``deny`` → ``""``: what ``exception`` names (conftest's
    ``removeRulePrefix``)."""
    return "" if name in ("deny", "warn", "violation") else _PREFIX.sub("", name)


def _namespace_rules(document: Any) -> dict[str, Any]:
    """The conftest rules (and ``exception``) of a namespace's whole document."""
    if not isinstance(document, dict):
        return {}
    wanted = {k: v for k, v in document.items() if FAILURE.match(k) or WARNING.match(k)}
    if "exception" in document:
        wanted["exception"] = document["exception"]
    return dict(sorted(wanted.items()))


def _exceptions(value: Any) -> set[str]:
    """Rule names (prefix removed) that ``exception`` exempts: a set of sets of strings."""
    if not isinstance(value, list):
        return set()
    return {name for group in value if isinstance(group, list) for name in group
            if isinstance(name, str)}  # fmt: skip


def _results(namespace: str, name: str, value: Any) -> list[ConftestResult]:
    query = f"data.{namespace}.{name}"
    if value is True:
        raise PolicyError(
            f"{query} is a boolean: conftest rules are sets, write `{name} contains msg if {{...}}`"
        )
    if not isinstance(value, list):
        return []  # undefined, or not a set: conftest counts it as a pass
    severity: Literal["error", "warning"] = "error" if FAILURE.match(name) else "warning"
    rule = f"{namespace}.{name}"
    results = []
    for item in value:
        if isinstance(item, str):
            if item:
                results.append(ConftestResult(rule, namespace, severity, item, query))
        elif isinstance(item, dict):
            message = item.get("msg")
            if not isinstance(message, str):
                raise PolicyError(f"{query}: a result needs a string 'msg', got {item!r}")
            if message:
                placed = _placed(query, item)
                results.append(ConftestResult(rule, namespace, severity, message, query, *placed))
    return results


def _placed(query: str, item: dict[str, Any]) -> tuple[str | None, Location | None, dict[str, Any]]:
    """A structured result's pointer, ``_loc`` and other keys (its metadata)."""
    pointer = item.get("pointer")
    if pointer is not None and not (isinstance(pointer, str) and _is_pointer(pointer)):
        raise PolicyError(f"{query}: 'pointer' must be a JSON pointer string, got {pointer!r}")
    location = _loc(query, item["_loc"]) if "_loc" in item else None
    metadata = {k: v for k, v in item.items() if k not in ("msg", "_loc", "pointer")}
    return pointer, location, metadata


def _loc(query: str, value: Any) -> Location:
    """conftest's ``_loc: {file, line}`` as a location (column 1: conftest has none)."""
    if not isinstance(value, dict) or not isinstance(value.get("file"), str) or not value["file"]:
        raise PolicyError(f"{query}: '_loc' must be an object with a 'file' string, got {value!r}")
    line = value.get("line", 1)
    if isinstance(line, bool) or not isinstance(line, (int, float)) or line < 1:
        raise PolicyError(f"{query}: '_loc.line' must be a number ≥ 1, got {line!r}")
    return Location(file=display(Path(value["file"])), line=int(line), column=1)


def _is_pointer(value: str) -> bool:
    return value == "" or value.startswith("/")


def _is_waste(value: Any) -> bool:
    """The builtin findings' ``waste``: both figures, numbers."""
    return (
        isinstance(value, dict)
        and set(value) == {"gpu_hours", "usd"}
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values())
    )


# -- conftest mode: the policies see each file as conftest parses it -------------------------


@dataclass(frozen=True)
class FileMode:
    """``check --conftest DIR``: a conftest policy directory, compiled once, whose namespaces
    run on every YAML, JSON and TOML file of the check (``conftest_input``), beside the jobs."""

    policy_dir: Path
    plan: ConftestPlan
    engine: Engine
    rule_ids: tuple[str, ...]

    @classmethod
    def load(cls, policy_dir: Path, compile_pack: Callable[[Pack], Engine],
             options: FileModeOptions) -> FileMode:  # fmt: skip
        """The policy directory as a pack: a module of no declared Rego version that does not
        parse as v1 is v0 (conftest's policies predate OPA 1.0), or every one with --rego-v0."""
        pack = dataclasses.replace(load_pack(policy_dir), rego_fallback=True)
        if options.rego_v0:
            pack = with_rego_v0(pack)
        plan = ConftestPlan.of(pack, options.namespaces, options.all_namespaces)
        if not plan.namespaces:
            raise ConfigError(
                f"--conftest {policy_dir}: no package to run (conftest's default is `package "
                "main`; name others with --namespace or --all-namespaces)"
            )
        ids = conftest_rule_ids(pack, options.namespaces, options.all_namespaces)
        return cls(policy_dir, plan, compile_pack(pack), tuple(ids))

    def wants(self, path: Path) -> bool:
        """A file conftest would parse, and not one of the policy directory's own."""
        return is_input(path) and not path.resolve().is_relative_to(self.policy_dir.resolve())

    def findings(self, path: Path) -> list[Finding]:
        """Each document's findings; InputError when the file does not parse."""
        found = []
        for document in read_inputs(path, display(path)):
            query = self.engine.query
            results = conftest_findings(query, document.value, self.plan.namespaces,
                                        self.plan.rules)  # fmt: skip
            found += [file_finding(document, result) for result in results]
        return found


@dataclass(frozen=True)
class FileModeOptions:
    namespaces: Sequence[str] = ()
    all_namespaces: bool = False
    rego_v0: bool = False


def file_finding(document: Input, result: ConftestResult) -> Finding:
    """A conftest result on a file's document: at ``_loc``, else at its pointer's value in the
    document, else at the document's first line."""
    where = result.location or document.locate(result.pointer)
    identity = f"{document.file}#{document.index}{result.pointer or ''}"
    return Finding(
        rule=result.rule, name=result.rule, severity=result.severity, message=result.message,
        file=where.file, line=where.line, column=where.column, job=document.file,
        fingerprint=fingerprint(result.rule, identity, result.message),
    )  # fmt: skip
