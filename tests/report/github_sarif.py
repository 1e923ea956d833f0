"""A checker of what GitHub code scanning requires of an uploaded SARIF file.

Written from ../shared/reference/policy-tools.md §3.8 (GitHub's "SARIF support for code
scanning" page, github/docs commit 058fa63) and that page's upload limits. The JSON schema
checks types and shapes; this checks what GitHub adds on top: required fields as non-empty
strings, its length limits, relative and stable locations, lines from 1, fingerprints.
"""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

TEXT_LIMIT = 1024  # shortDescription.text, fullDescription.text
NAME_LIMIT = 255  # reportingDescriptor.name
MAX_LOCATIONS = 10  # per result; GitHub reads the first
MAX_RESULTS = 25_000  # per run
MAX_RULES = 25_000  # per run
MAX_TAGS = 20  # per rule
MAX_GZIP_BYTES = 10 * 1024 * 1024
LEVELS = {"note", "warning", "error"}
PROBLEM_SEVERITIES = {"error", "warning", "recommendation"}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def github_problems(log: dict[str, Any]) -> list[str]:
    """Every way ``log`` breaks GitHub's ingestion rules (an empty list: none)."""
    problems: list[str] = []
    _need(problems, log.get("$schema"), "$schema")
    if log.get("version") != "2.1.0":
        problems.append("version is not 2.1.0")
    if len(gzip.compress(json.dumps(log).encode())) > MAX_GZIP_BYTES:
        problems.append("larger than 10 MB gzipped")
    runs = log.get("runs")
    if not isinstance(runs, list) or not runs:
        return [*problems, "missing runs"]
    for run in runs:
        problems += _run_problems(run)
    return problems


def _need(problems: list[str], value: Any, what: str, limit: int | None = None) -> None:
    """A required value: a non-empty string (or an integer), within ``limit`` characters."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        problems.append(f"missing {what}")
    elif limit is not None and isinstance(value, str) and len(value) > limit:
        problems.append(f"{what} longer than {limit}")


def _run_problems(run: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    driver = run.get("tool", {}).get("driver", {})
    _need(problems, driver.get("name"), "tool.driver.name")
    rules = driver.get("rules")
    results = run.get("results")
    if not isinstance(rules, list) or not isinstance(results, list):
        return [*problems, "missing tool.driver.rules or results"]
    if len(rules) > MAX_RULES:
        problems.append(f"more than {MAX_RULES} rules")
    if len(results) > MAX_RESULTS:
        problems.append(f"more than {MAX_RESULTS} results")
    ids = [rule.get("id") for rule in rules]
    if len(set(ids)) != len(ids):
        problems.append("duplicate rule ids")
    for rule in rules:
        problems += _rule_problems(rule)
    for result in results:
        problems += _result_problems(result, ids)
    return problems


def _rule_problems(rule: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    rid = rule.get("id")
    _need(problems, rid, "rule.id")
    if "name" in rule:
        _need(problems, rule["name"], f"{rid}.name", NAME_LIMIT)
    for key in ("shortDescription", "fullDescription"):
        _need(problems, rule.get(key, {}).get("text"), f"{rid}.{key}.text", TEXT_LIMIT)
    _need(problems, rule.get("help", {}).get("text"), f"{rid}.help.text")
    level = rule.get("defaultConfiguration", {}).get("level", "warning")
    if level not in LEVELS:
        problems.append(f"{rid}: default level {level!r}")
    properties = rule.get("properties", {})
    if len(properties.get("tags", [])) > MAX_TAGS:
        problems.append(f"{rid}: more than {MAX_TAGS} tags")
    severity = properties.get("problem.severity", "warning")
    if severity not in PROBLEM_SEVERITIES:
        problems.append(f"{rid}: problem.severity {severity!r}")
    if "helpUri" in rule and not str(rule["helpUri"]).startswith("https://"):
        problems.append(f"{rid}: helpUri is not an absolute https URL")
    return problems


def _result_problems(result: dict[str, Any], rule_ids: list[Any]) -> list[str]:
    problems: list[str] = []
    rid = result.get("ruleId")
    _need(problems, rid, "result.ruleId")
    _need(problems, result.get("message", {}).get("text"), f"{rid}: message.text")
    index = result.get("ruleIndex")
    if index is not None and (index >= len(rule_ids) or rule_ids[index] != rid):
        problems.append(f"{rid}: ruleIndex points at another rule")
    if rid not in rule_ids:
        problems.append(f"{rid}: no rule descriptor")
    if not result.get("partialFingerprints"):
        problems.append(f"{rid}: missing partialFingerprints")
    locations = result.get("locations")
    if not isinstance(locations, list) or not 1 <= len(locations) <= MAX_LOCATIONS:
        return [*problems, f"{rid}: needs 1 to {MAX_LOCATIONS} locations"]
    return problems + _location_problems(rid, locations[0].get("physicalLocation", {}))


def _location_problems(rid: Any, physical: dict[str, Any]) -> list[str]:
    """The first location (the one GitHub reads): a relative URI in the repository and a
    region whose lines and columns start at 1."""
    problems: list[str] = []
    uri = physical.get("artifactLocation", {}).get("uri")
    _need(problems, uri, f"{rid}: artifactLocation.uri")
    if isinstance(uri, str) and (uri.startswith("/") or _SCHEME.match(uri)):
        problems.append(f"{rid}: artifactLocation.uri {uri!r} is not relative")
    if isinstance(uri, str) and ".." in uri.split("/"):
        problems.append(f"{rid}: artifactLocation.uri {uri!r} leaves the repository")
    region = physical.get("region", {})
    for key in ("startLine", "startColumn", "endLine"):
        value = region.get(key)
        if not isinstance(value, int) or value < 1:
            problems.append(f"{rid}: region.{key} must be an integer from 1, not {value!r}")
    if isinstance(region.get("endLine"), int) and region["endLine"] < region.get("startLine", 1):
        problems.append(f"{rid}: region ends before it starts")
    return problems
