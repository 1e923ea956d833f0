"""JSON Schemas generated from the pydantic models and checked in under ``schemas/``.

Regenerate with ``python -m trainlint.schema``; a test fails when the checked-in files drift.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from trainlint.estimate_view import EstimateReport
from trainlint.job import Job
from trainlint.probe.result import Measurement
from trainlint.report._statistics import StatisticsReport
from trainlint.report.json_ import JsonReport
from trainlint.resources import bundled
from trainlint.results import DiffReport
from trainlint.writing import replace_file

SCHEMAS: dict[str, type[BaseModel]] = {
    "job.schema.json": Job,
    "findings.schema.json": JsonReport,
    "estimate.schema.json": EstimateReport,
    "diff.schema.json": DiffReport,
    "measurement.schema.json": Measurement,
    "statistics.schema.json": StatisticsReport,
}


def render(model: type[BaseModel]) -> str:
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write(directory: Path) -> list[Path]:
    written = []
    for name, model in SCHEMAS.items():
        path = directory / name
        replace_file(path, render(model))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1]) if len(sys.argv) > 1 else bundled("schemas")):
        print(path)
