"""``trainlint pack init``: a pack skeleton that builds, tests and lints out of the box.

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
from trainlint.writing import replace_file

SLUG = "max-gpus-per-job"
PACKAGE = SLUG.replace("-", "_")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


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
        f"{PACKAGE}.rego": RULE.replace("@ID@", ident),
        f"{PACKAGE}_test.rego": RULE_TEST,
        f"trainlint/params/{PACKAGE}/data.json": json.dumps(PARAMS, indent=2) + "\n",
        f"tests/cases/{ident}.yaml": CASES.replace("@ID@", ident),
    }
    written = []
    for rel, text in files.items():
        target = directory / rel
        replace_file(target, text)
        written.append(target)
    return written


def _manifest(name: str) -> str:
    manifest = {
        "revision": "0.1.0",
        "roots": [f"trainlint/rules/{PACKAGE}", f"trainlint/params/{PACKAGE}"],
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
trainlint pack build . -o {name}.tar.gz    # a deterministic bundle OPA also loads
trainlint pack sign . --key private.pem --algorithm RS256   # before build
trainlint pack inspect {name}.tar.gz
trainlint pack verify {name}.tar.gz --key public.pem
```

Bump `revision` in `.manifest` on every release; repositories see it in `pack inspect`.
"""
