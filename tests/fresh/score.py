"""Score trainlint on the fresh repositories against their labels (see README.md here).

``python -m tests.fresh.score [NAME...]`` prints the table; ``--details`` lists every wrong
fact, false positive and miss. The test (``test_fresh.py``) holds the goals.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trainlint.workdir import working_directory

HERE = Path(__file__).parent
REPOS = HERE / "repos"
LABELS = HERE / "labels"
UNSUPPORTED = "TL907"


@dataclass
class Score:
    """One repository's figures; ``details`` says what each miss was."""

    name: str
    jobs: int = 0
    labelled_jobs: int = 0
    jobs_found: int = 0
    facts: int = 0
    facts_right: int = 0
    facts_wrong: int = 0  # a value other than the label's: misread or invented
    invented: int = 0  # a value where the label says no file states one
    true_positives: int = 0
    false_positives: int = 0
    error_false_positives: int = 0
    misses: int = 0
    not_understood: int = 0
    silent_workloads: int = 0  # a GPU workload that is neither a job nor a notice
    hidden: int = 0  # a value the label says must stay visible, redacted
    details: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)


def labels(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((LABELS / f"{name}.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def names() -> list[str]:
    return sorted(path.stem for path in LABELS.glob("*.yaml"))


def run(name: str) -> tuple[list[Any], list[Any]]:
    """trainlint's jobs and findings on one repository folder, paths relative to its root."""
    from trainlint.lint import CheckOptions, check

    with working_directory(REPOS / name):  # a repository of its own, inside trainlint's
        report = check([Path(".")], CheckOptions(root=Path(".")))
    findings = [f for f in report.findings if f.suppression is None]
    return report.jobs, findings


def _same(found: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(found, bool):
        return found is expected
    if isinstance(expected, (int, float)) and isinstance(found, (int, float)):
        return abs(found - expected) <= 1e-9 * max(1.0, abs(expected))
    if isinstance(expected, str) and isinstance(found, str):
        return found.lower() == expected.lower()
    return bool(found == expected)


def value_at(job: Any, pointer: str) -> Any:
    """The job's value at a JSON pointer; ``/features/<name>`` is whether the job has that
    feature (a kernel, an optimizer), as labels write it."""
    if pointer.startswith("/features/"):
        name = pointer.removeprefix("/features/")
        return any(feature.name == name for feature in job.features)
    node: Any = job.as_input()
    for part in pointer.strip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def score(name: str) -> Score:
    spec = labels(name)
    jobs, findings = run(name)
    result = Score(name, jobs=len(jobs))
    by_id = {job.id: job for job in jobs}
    expected_jobs = {entry["root"]: entry for entry in spec.get("jobs") or []}
    files = {entry["path"]: entry for entry in spec.get("files") or []}
    result.labelled_jobs = len(expected_jobs)
    for root, entry in expected_jobs.items():
        _score_job(result, root, entry, by_id.get(root))
    for job in jobs:
        if job.id not in expected_jobs:
            outcome = files.get(job.id, {}).get("outcome", "unlabelled")
            result.details.append(f"extra job {job.id} (labelled {outcome})")
    in_jobs = {source.path for job in jobs for source in job.sources}
    _score_findings(result, findings, expected_jobs, files, in_jobs)
    return result


def _score_job(result: Score, root: str, entry: dict[str, Any], job: Any) -> None:
    facts = entry.get("facts") or {}
    result.facts += len(facts)
    if job is None:
        result.details.append(f"missing job {root}")
        return
    result.jobs_found += 1
    for pointer, expected in facts.items():
        found = value_at(job, pointer)
        if pointer.startswith("/features/") and found is False and expected:
            found = None  # a feature not read is unknown, not a wrong value
        if _same(found, expected):
            result.facts_right += 1
        elif found is not None:
            result.facts_wrong += 1
            result.details.append(f"wrong {root} {pointer}: {found!r}, labelled {expected!r}")
        else:
            result.details.append(f"unknown {root} {pointer}: labelled {expected!r}")
    for pointer in entry.get("unknown") or []:
        found = value_at(job, pointer)
        if found is not None:
            result.invented += 1
            result.details.append(f"invented {root} {pointer}: {found!r}")
    command = str(value_at(job, "/launcher/command") or "")
    for text in entry.get("visible") or []:
        if text not in command:
            result.hidden += 1
            result.details.append(f"hidden {root}: {text!r} not in the launch command")


def _score_findings(
    result: Score,
    findings: list[Any],
    jobs: dict[str, dict[str, Any]],
    files: dict[str, dict[str, Any]],
    in_jobs: set[str],
) -> None:
    fired: dict[str, set[str]] = {}
    for finding in findings:
        owner = finding.job if finding.job in jobs else finding.file
        fired.setdefault(owner, set()).add(finding.rule)
        entry = jobs.get(owner) or files.get(owner) or {}
        allowed = {*(entry.get("findings") or []), *(entry.get("maybe") or [])}
        if finding.rule in allowed:
            result.true_positives += 1
            continue
        result.false_positives += 1
        result.error_false_positives += finding.severity == "error"
        where = f"{finding.file}:{finding.line}"
        result.details.append(
            f"false positive {finding.rule} [{finding.severity}] {where}: {finding.message[:140]}"
        )
        if finding.rule == UNSUPPORTED:
            result.not_understood += 1
    for owner, entry in [*jobs.items(), *files.items()]:
        for rule in entry.get("findings") or []:
            if rule not in fired.get(owner, set()):
                result.misses += 1
                result.details.append(f"missed {rule} on {owner}")
    for path, entry in files.items():
        if entry.get("outcome") == "unsupported":
            if UNSUPPORTED in fired.get(path, set()):
                result.not_understood += 1
            elif path not in in_jobs:  # read now as (part of) a job: not silent
                result.silent_workloads += 1
    result.silent_workloads += sum(
        1 for root in jobs if root not in fired and _no_job(result, root)
    )


def _no_job(result: Score, root: str) -> bool:
    return f"missing job {root}" in result.details


COLUMNS = (
    ("repository", "name"), ("jobs", "jobs"), ("labelled", "labelled_jobs"),
    ("found", "jobs_found"), ("facts", "facts"), ("right", "facts_right"),
    ("wrong", "facts_wrong"), ("invented", "invented"), ("TP", "true_positives"),
    ("FP", "false_positives"), ("error FP", "error_false_positives"), ("missed", "misses"),
    ("not understood", "not_understood"), ("silent", "silent_workloads"), ("hidden", "hidden"),
)  # fmt: skip


def table(scores: list[Score]) -> str:
    total = Score("total")
    for item in scores:
        total.add(item)
    rows = [[str(getattr(s, attr)) for _, attr in COLUMNS] for s in [*scores, total]]
    header = [title for title, _ in COLUMNS]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
              for r in rows]  # fmt: skip
    share = total.facts_right / total.facts if total.facts else 1.0
    lines.append(f"\nfacts right: {total.facts_right}/{total.facts} ({share:.1%})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", default=None)
    parser.add_argument("--details", action="store_true")
    args = parser.parse_args()
    scores = [score(name) for name in (args.names or names())]
    print(table(scores))
    if args.details:
        for item in scores:
            for line in item.details:
                print(f"{item.name}: {line}")


if __name__ == "__main__":
    main()
