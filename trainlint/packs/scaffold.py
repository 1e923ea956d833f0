"""``trainlint pack init``: a pack skeleton that builds, tests and lints out of the box;
``trainlint pack add-rule``: one more rule in it, just as complete.

Layout (an OPA bundle directory)::

    .manifest                                    revision, roots, metadata
    README.md
    max_gpus_per_job.rego                        one rule with full METADATA
    max_gpus_per_job_test.rego                   its opa-test-style unit tests
    trainlint/params/max_gpus_per_job/data.json  -> data.trainlint.params.max_gpus_per_job
    tests/cases/<ID>.yaml                        data-driven cases (tests/rules/test_cases.py)

The roots are exactly the rule's package and its params, so the pack can sit next to the
builtin pack (root ``trainlint``) in one OPA without overlapping anything but what it owns.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from trainlint import __version__
from trainlint.errors import ConfigError
from trainlint.packs import SLUG_RE, load_pack
from trainlint.packs.bundle import MANIFEST, root_contains
from trainlint.writing import replace_file

SLUG = "max-gpus-per-job"
PACKAGE = SLUG.replace("-", "_")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_NUMBERED = re.compile(r"^([A-Za-z]+)(\d+)$")


def rule_id(name: str) -> str:
    """The example rule's id: the pack name's letters and digits, upper-cased, then 001."""
    prefix = re.sub(r"[^A-Za-z0-9]", "", name).upper()[:8]
    if not prefix or not prefix[0].isalpha():
        prefix = "ORG" + prefix
    return f"{prefix[:8]}001"


def init(name: str, directory: Path) -> list[Path]:
    """Write the skeleton of pack ``name`` into ``directory`` (new or empty); its files."""
    if not _NAME.match(name):
        raise ConfigError(f"pack name {name!r}: use lower-case letters, digits, '-', '_' or '.'")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ConfigError(f"{directory} exists and is not an empty directory")
    ident = rule_id(name)
    files = {
        ".manifest": _manifest(name),
        "README.md": README.format(name=name, id=ident, slug=SLUG, package=PACKAGE),
        **_rule_files(SLUG, ident, "tests/cases"),
    }
    return _write(directory, files)


def _rule_files(slug: str, ident: str, cases: str) -> dict[str, str]:
    """A rule's files (the example rule under the name ``slug``): the Rego module, its unit
    tests, its parameters and its case file in the folder ``cases``."""
    package = slug.replace("-", "_")

    def renamed(template: str) -> str:
        return template.replace(PACKAGE, package).replace(SLUG, slug).replace("@ID@", ident)

    rule = renamed(RULE)
    if slug != SLUG:
        rule = ADDED.format(slug=slug, example=SLUG) + rule
    return {
        f"{package}.rego": rule,
        f"{package}_test.rego": renamed(RULE_TEST),
        f"trainlint/params/{package}/data.json": json.dumps(PARAMS, indent=2) + "\n",
        f"{cases}/{ident}.yaml": renamed(CASES),
    }


def _roots(package: str) -> list[str]:
    """The manifest roots a rule owns: its package and its parameters."""
    return [f"trainlint/rules/{package}", f"trainlint/params/{package}"]


def _write(directory: Path, files: dict[str, str]) -> list[Path]:
    written = []
    for rel, text in files.items():
        target = directory / rel
        replace_file(target, text)
        written.append(target)
    return written


def add_rule(directory: Path, slug: str) -> tuple[str, list[Path]]:
    """Add rule ``slug`` to the pack in ``directory``: its module (with METADATA), unit
    tests, parameters and case file, and its roots in ``.manifest``, so ``pack test``
    passes without a manual edit. Returns the new rule's id and the files written."""
    if not SLUG_RE.match(slug):
        raise ConfigError(f"rule name {slug!r}: use a lower-case hyphenated slug (max-nodes)")
    pack = load_pack(directory)
    if pack.get_rule(slug) is not None:
        raise ConfigError(f"{directory}: the pack already has a rule {slug!r}")
    ident = next_rule_id([rule.id for rule in pack.rules], pack.name)
    if pack.get_rule(ident) is not None:  # ids with no number to count on: ORG-A, ORG-B
        raise ConfigError(f"{directory}: rule id {ident} is taken; cannot choose the next id")
    files = _rule_files(slug, ident, _cases_folder(directory))
    taken = [rel for rel in files if (directory / rel).exists()]
    if taken:
        raise ConfigError(f"{directory}: {', '.join(taken)} exist(s); not overwritten")
    written = _write(directory, files)
    manifest = _add_roots(directory, _roots(slug.replace("-", "_")))
    return ident, written + ([manifest] if manifest else [])


def next_rule_id(ids: list[str], pack_name: str) -> str:
    """The id after the pack's highest (``ACME001`` -> ``ACME002``, same prefix and width);
    for a pack with no rules, the one ``pack init`` would give it."""
    numbered = sorted(m.groups() for m in map(_NUMBERED.match, ids) if m)
    if not numbered:
        return rule_id(pack_name)
    prefix = numbered[0][0]
    digits = [number for head, number in numbered if head == prefix]
    width = max(len(number) for number in digits)
    return f"{prefix}{max(int(number) for number in digits) + 1:0{width}d}"


def _cases_folder(directory: Path) -> str:
    """Where ``pack test`` looks for cases: tests/cases, else cases, else a new tests/cases."""
    for folder in ("tests/cases", "cases"):
        if (directory / folder).is_dir():
            return folder
    return "tests/cases"


def _add_roots(directory: Path, roots: list[str]) -> Path | None:
    """Append the ``roots`` no root of ``.manifest`` holds yet; the manifest path when it
    changed (a pack with no manifest, or no ``roots``, owns everything already)."""
    path = directory / MANIFEST
    if not path.is_file():
        return None
    manifest = json.loads(path.read_text(encoding="utf-8"))
    current = manifest.get("roots")
    if current is None:
        return None
    missing = [new for new in roots
               if not any(root_contains(old.strip("/"), new) for old in current)]  # fmt: skip
    if not missing:
        return None
    manifest["roots"] = [*current, *missing]
    replace_file(path, json.dumps(manifest, indent=2) + "\n")
    return path


def _manifest(name: str) -> str:
    manifest = {
        "revision": "0.1.0",
        "roots": _roots(PACKAGE),
        "rego_version": 1,
        "metadata": {
            "name": name,
            "version": "0.1.0",
            "description": f"{name}: the organisation's trainlint rules and parameters.",
            "min_trainlint_version": __version__.split("+")[0],
        },
    }
    return json.dumps(manifest, indent=2) + "\n"


PARAMS = {"max_gpus": 64}

ADDED = """\
# Written by `trainlint pack add-rule {slug}`: a copy of the example rule ({example}),
# with its unit tests, parameters and cases, that `trainlint pack test` passes. Edit the METADATA,
# the logic, the tests and the cases into what {slug} checks.

"""

RULE = """\
# METADATA
# title: max-gpus-per-job
# description: |
#   Fires when a job asks for more GPUs (resources.world_size: nodes x GPUs per node) than the
#   organisation lets one job take without a capacity review (params max_gpus). A job whose
#   GPU count is unknown stays quiet.
# related_resources:
#   - ref: https://slurm.schedmd.com/sbatch.html#OPT_gpus-per-node
#     description: sbatch --nodes and --gpus-per-node set the GPU count of a SLURM job.
#   - ref: https://pytorch.org/docs/stable/elastic/run.html
#     description: torchrun --nnodes and --nproc_per_node set the world size.
# custom:
#   id: @ID@
#   severity: warning
#   category: governance
#   why: |
#     A job that takes a large share of the cluster blocks every other team's queue for as
#     long as it runs, and a mistake in it (a wrong batch size, a hang) is paid for on every
#     one of its GPUs. A review before the run catches both while they are still cheap.
#   example: |
#     # train.slurm
#     #SBATCH --nodes=16
#     #SBATCH --gpus-per-node=8
#     srun torchrun --nnodes=16 --nproc_per_node=8 train.py
#   fix: |
#     # train.slurm
#     #SBATCH --nodes=8
#     #SBATCH --gpus-per-node=8
#     srun torchrun --nnodes=8 --nproc_per_node=8 train.py
#   remediation: |
#     Run on at most max_gpus GPUs, or get the capacity review and record it as a waiver
#     (rule, path, reason, expires, approved_by) in the repository's trainlint config.
package trainlint.rules.max_gpus_per_job

import rego.v1

params := data.trainlint.params.max_gpus_per_job

findings contains finding if {
	_applies
	finding := {"message": _message, "pointer": "/resources/world_size"}
}

_applies if {
	is_number(input.resources.world_size)
	is_number(params.max_gpus)
	input.resources.world_size > params.max_gpus
}

# Guarded by _applies: regorus evaluates a complete rule even when its value is not needed.
_message := concat("", [
	"job runs on ", format_int(input.resources.world_size, 10), " GPUs, over the ",
	format_int(params.max_gpus, 10), " one job may use without a capacity review",
]) if _applies
"""

RULE_TEST = """\
package trainlint.rules.max_gpus_per_job

import rego.v1

_job(gpus) := {"resources": {"world_size": gpus}}

_low := {"max_gpus": 32}

test_fires_over_the_limit if {
	count(findings) == 1 with input as _job(128)
}

test_quiet_at_the_limit if {
	count(findings) == 0 with input as _job(64)
}

test_quiet_when_the_gpu_count_is_unknown if {
	count(findings) == 0 with input as _job(null)
}

test_message_states_both_numbers if {
	job := _job(96)
	some finding in findings with input as job with data.trainlint.params.max_gpus_per_job as _low
	finding.message == "job runs on 96 GPUs, over the 32 one job may use without a capacity review"
	finding.pointer == "/resources/world_size"
}
"""

CASES = """\
rule: @ID@
cases:
  - name: SLURM job on 16 nodes of 8 GPUs
    files:
      train.slurm: |
        #!/bin/bash
        #SBATCH --job-name=pretrain
        #SBATCH --nodes=16
        #SBATCH --gpus-per-node=8
        #SBATCH --time=48:00:00
        srun torchrun --nnodes=16 --nproc_per_node=8 train.py
    expect:
      - file: train.slurm
        line: 6
        column: 27
        message: ["runs on 128 GPUs", "over the 64"]
  - name: torchrun launch script
    files:
      launch.sh: |
        #!/bin/bash
        set -euo pipefail
        torchrun --nnodes=16 --nproc_per_node=8 --rdzv_backend=c10d train.py --max_steps 2000
    expect:
      - file: launch.sh
        line: 3
        column: 22
        message: "runs on 128 GPUs"
  - name: Kubeflow PyTorchJob with 16 workers of 8 GPUs
    files:
      pytorchjob.yaml: |
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata:
          name: pretrain
        spec:
          pytorchReplicaSpecs:
            Worker:
              replicas: 16
              template:
                spec:
                  containers:
                    - name: pytorch
                      image: nvcr.io/nvidia/pytorch:24.05-py3
                      command: ["torchrun", "--nproc_per_node=8", "train.py"]
                      resources:
                        limits:
                          nvidia.com/gpu: 8
    expect:
      - file: pytorchjob.yaml
        line: 17
        column: 19
        message: "runs on 128 GPUs"
  - name: at the limit (8 nodes of 8 GPUs)
    files:
      train.slurm: |
        #!/bin/bash
        #SBATCH --nodes=8
        #SBATCH --gpus-per-node=8
        #SBATCH --time=48:00:00
        srun torchrun --nnodes=8 --nproc_per_node=8 train.py
    expect: []
  - name: GPU count unknown (a bare HF Trainer config)
    files:
      train.yaml: |
        model_name_or_path: meta-llama/Llama-3.1-8B
        output_dir: out
        per_device_train_batch_size: 4
        max_steps: 1000
        seed: 42
    expect: []
"""

README = """\
# {name}: a trainlint policy pack

An [OPA bundle](https://www.openpolicyagent.org/docs/latest/management-bundles/) of trainlint
rules. It holds one example rule, `{id}` ({slug}), to copy from.

| file | what it is |
|---|---|
| `.manifest` | revision, roots (the paths this pack owns), metadata (name, version, ...) |
| `{package}.rego` | the rule: METADATA (id, severity, why, example, fix, ...), `findings` |
| `{package}_test.rego` | unit tests, `opa test` conventions (`test_` rules, `todo_` skipped) |
| `trainlint/params/{package}/data.json` | its parameters: `data.trainlint.params.{package}` |
| `tests/cases/{id}.yaml` | data-driven cases: job files and the findings they must give |

A `data.json` is merged at its directory's path, and every package and data path must sit under
one of the manifest's `roots`: add a root when the pack grows (for example `trainlint/locks`).

```sh
trainlint pack test .                      # unit tests and cases
trainlint pack add-rule max-nodes          # a new rule: module, tests, params, cases, roots
trainlint pack build . -o {name}.tar.gz    # a deterministic bundle OPA also loads
trainlint pack sign . --key private.pem --algorithm RS256   # before build
trainlint pack inspect {name}.tar.gz
trainlint pack verify {name}.tar.gz --key public.pem
```

Bump `revision` in `.manifest` on every release; repositories see it in `pack inspect`.
"""
