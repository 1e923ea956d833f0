"""The org fleet (issue 21 item 1): read from every config form and from a pack, pools matched
on where each scheduler places a job, locked keys kept, and every number it feeds marked
``fleet`` in the estimates and in ``trainlint check``."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import EXAMPLES
from trainlint.cli import main
from trainlint.config import find_config
from trainlint.errors import ConfigError, PolicyError
from trainlint.estimate import EstimateParams, estimate
from trainlint.fleet import Fleet, hardware
from trainlint.job import Job
from trainlint.lint import load_jobs
from trainlint.packs import Pack, load_builtin_pack
from trainlint.packs.layering import layer

BUILTIN = load_builtin_pack()
FLEET_PACK = EXAMPLES / "fleet-pack"

FLEET_TOML = """\
default-gpu = "h100"
gpus-per-node = 4
storage-price = 0.02
prices = {{ "A100-80GB" = 1.1 }}

[[{prefix}fleet.pools]]
name = "long"
match = {{ partition = "gpu-h100*" }}
gpu = "H100-SXM"
gpus-per-node = 8
price = 2.5
interconnect = {{ nvlink-gbps = 7200, fabric-gbps = 3200 }}
"""

FLEET_YAML = """\
fleet:
  default-gpu: h100
  gpus-per-node: 4
  storage-price: 0.02
  prices: {A100-80GB: 1.1}
  pools:
    - name: long
      match: {partition: "gpu-h100*"}
      gpu: H100-SXM
      gpus-per-node: 8
      price: 2.5
      interconnect: {nvlink-gbps: 7200, fabric-gbps: 3200}
"""

CONFIGS = {
    "pyproject.toml": "[tool.trainlint.fleet]\n" + FLEET_TOML.format(prefix="tool.trainlint."),
    ".trainlint.toml": "[fleet]\n" + FLEET_TOML.format(prefix=""),
    ".trainlint.yaml": FLEET_YAML,
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_fleet_is_read_from_every_config_form(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(CONFIGS[name])
    fleet = find_config(tmp_path).fleet
    assert fleet is not None
    assert fleet.default_gpu == "H100-SXM"  # an alias, spelled as the catalog spells it
    assert (fleet.gpus_per_node, fleet.storage_price) == (4, 0.02)
    assert fleet.prices == {"A100-80GB": 1.1}
    [pool] = fleet.pools
    assert (pool.name, pool.match.partition, pool.gpu, pool.gpus_per_node) == (
        "long", "gpu-h100*", "H100-SXM", 8)  # fmt: skip
    assert pool.interconnect is not None and pool.interconnect.fabric_gbps == 3200


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[fleet]\ndefault-gpu = "H100-SMX"\n',
         r"\.trainlint\.toml:2:16: fleet\.default-gpu: .*unknown GPU 'H100-SMX' "
         r"\(did you mean 'H100-SXM'\?\)"),
        ("[fleet]\ngpus_per_nod = 8\n",
         r"\.trainlint\.toml:2:1: fleet\.gpus_per_nod: unknown key \(did you mean "
         r"'gpus-per-node'\?\)"),
        ('[fleet]\nprices = { "A100-80GB" = -1 }\n', r"fleet\.prices: .*above 0"),
        ("[[fleet.pools]]\ngpu = 'L4'\nmatch = {}\n", r"fleet\.pools\.0\.match: .*at least one"),
    ],
)  # fmt: skip
def test_a_bad_fleet_is_a_config_error_at_its_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".trainlint.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        find_config(tmp_path)


def kubernetes_job(placement: str) -> str:
    """A batch/v1 Job of 8 GPUs whose pod spec says where it runs with ``placement``."""
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: sft}}
spec:
  template:
    spec:
{placement}
      containers:
        - name: train
          image: ghcr.io/acme/train:1
          command: [torchrun, --nproc_per_node=8, train.py]
          resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


INSTANCE_TYPE_AFFINITY = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}"""

# One file per scheduler, each placed where a pool of the example pack (acme-fleet) matches.
PLACED = {
    "slurm partition": ("train.slurm", "#!/bin/bash\n#SBATCH --partition=gpu-h100-long\n"
                        "#SBATCH --gres=gpu:8\nsrun python train.py\n"),
    "slurm constraint": ("train.slurm", "#!/bin/bash\n#SBATCH --constraint=a100&ib\n"
                         "#SBATCH --gres=gpu:4\nsrun python train.py\n"),
    "kubernetes node selector": ("job.yaml", kubernetes_job(
        "      nodeSelector: {cloud.google.com/gke-nodepool: h100-spot}")),
    "kubernetes instance type": ("job.yaml", kubernetes_job(INSTANCE_TYPE_AFFINITY)),
    "submitit constraint": ("submit.py", "import submitit\nex = submitit.AutoExecutor('l')\n"
                            "ex.update_parameters(gpus_per_node=4, slurm_constraint='a100&ib')\n"
                            "ex.submit(train)\n"),
    "hydra submitit partition": ("train.yaml", "defaults:\n"
                                 "  - override hydra/launcher: submitit_slurm\n"
                                 "trainer: {max_epochs: 1}\nhydra:\n  launcher:\n"
                                 "    partition: gpu-h100-long\n    gpus_per_node: 8\n"),
    "skypilot cloud and accelerator": ("task.yaml", """\
resources:
  cloud: gcp
  accelerators: L4:1
run: |
  python train.py
"""),
}  # fmt: skip

EXPECTED_POOL = {
    "slurm partition": ("slurm-h100", "H100-SXM", 8, None),
    "slurm constraint": ("slurm-a100-constraint", "A100-80GB", 4, None),
    "kubernetes node selector": ("gke-h100", "H100-SXM", 8, None),
    "kubernetes instance type": ("aws-p5", "H100-SXM", 8, 3.1),
    "skypilot cloud and accelerator": ("sky-gcp-l4", "L4", None, 0.7),
    "submitit constraint": ("slurm-a100-constraint", "A100-80GB", 4, None),
    "hydra submitit partition": ("slurm-h100", "H100-SXM", 8, None),
}


def example_fleet() -> Fleet:
    return Fleet.model_validate(
        json.loads((FLEET_PACK / "trainlint" / "fleet" / "data.json").read_text())
    )


def one_job(folder: Path, name: str, text: str) -> Job:
    (folder / name).write_text(text)
    [job] = load_jobs([folder / name])
    return job


@pytest.mark.parametrize("case", sorted(PLACED))
def test_each_scheduler_placement_matches_its_pool(tmp_path: Path, case: str) -> None:
    job = one_job(tmp_path, *PLACED[case])
    found = hardware(example_fleet(), job.resources.placement, None)
    pool, gpu, per_node, price = EXPECTED_POOL[case]
    assert found.pool == pool
    assert found.gpu is not None and found.gpu.name == gpu
    assert found.gpus_per_node == (per_node or 8)  # else the fleet's own gpus-per-node
    assert found.price == (price or example_fleet().prices[gpu])  # the pool's, else the fleet's


def test_a_job_no_pool_matches_gets_the_fleets_defaults(tmp_path: Path) -> None:
    text = "#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --gres=gpu:8\nsrun python t.py\n"
    job = one_job(tmp_path, "train.slurm", text)
    found = hardware(example_fleet(), job.resources.placement, None)
    assert found.pool is None
    assert found.gpu is not None and found.gpu.name == "A100-80GB"
    assert (found.gpus_per_node, found.price) == (8, 1.2)


def test_an_alternative_constraint_matches_no_pool(tmp_path: Path) -> None:
    """``a100|h100`` lets SLURM pick either: the pool of one of them would be a guess."""
    text = "#!/bin/bash\n#SBATCH --constraint=a100|h100\nsrun python train.py\n"
    job = one_job(tmp_path, "train.slurm", text)
    assert hardware(example_fleet(), job.resources.placement, None).pool is None


# ---------------------------------------------------------------- estimates, end to end


def repository(folder: Path, config: str = "") -> Path:
    """A git work tree that lists the example fleet pack, with ``config`` appended."""
    (folder / ".git").mkdir()
    shutil.copytree(FLEET_PACK, folder / "acme-fleet")
    (folder / ".trainlint.toml").write_text(f'[[packs]]\npath = "acme-fleet"\n\n{config}')
    return folder


GPT2_ON_H100_PARTITION = """\
#!/usr/bin/env bash
#SBATCH --partition=gpu-h100-long
#SBATCH --nodes=1
#SBATCH --gres=gpu:8
#SBATCH --time=12:00:00
srun torchrun --nproc-per-node 8 finetune.py \\
    --model_name_or_path openai-community/gpt2 \\
    --per_device_train_batch_size 8 \\
    --max_steps 20000 \\
    --max_seq_length 1024 \\
    --bf16 \\
    --save_steps 10 \\
    --output_dir out
"""


def check_json(folder: Path, monkeypatch: pytest.MonkeyPatch, *paths: str) -> dict[str, Any]:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["check", "--format", "json", "--exit-zero", *paths])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def test_a_gres_without_a_type_gets_its_gpu_from_the_partitions_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--gres=gpu:8`` with the type only in the partition: memory, cost and findings."""
    folder = repository(tmp_path)
    (folder / "train.slurm").write_text(GPT2_ON_H100_PARTITION)
    report = check_json(folder, monkeypatch, "train.slurm")
    [job] = report["jobs"]
    estimates = job["estimates"]
    sources = estimates["sources"]
    assert estimates["gpu"] == "H100-SXM" and sources["gpu"] == "fleet"
    assert estimates["price_per_gpu_hour"] == 2.2 and sources["price_per_gpu_hour"] == "fleet"
    assert sources["memory.gpu_bytes"] == "fleet"
    assert 0 < estimates["memory"]["utilization"] < 0.2
    assert estimates["run"]["usd"] > 0 and estimates["checkpoint"]["overhead_usd"] > 0
    found = {f["rule"]: f for f in report["findings"]}
    # No TL101: the cheaper GPUs that fit would take more than 1.5x as long (issue 21).
    assert found["TL201"]["waste"]["usd"] > 0  # priced at the fleet's $2.20 per GPU-hour
    assert "(the fleet's price)" in found["TL202"]["message"]


def test_the_estimate_command_marks_what_the_fleet_gave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = repository(tmp_path)
    (folder / "train.slurm").write_text(GPT2_ON_H100_PARTITION)
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["estimate", "train.slurm"])
    rows = {line.split()[0]: line.split()[-1] for line in result.output.splitlines() if line}
    assert (rows["GPU"], rows["price"]) == ("fleet", "fleet")


def test_the_jobs_own_gpu_beats_the_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Declared beats fleet: a typed gres keeps its GPU and the catalog's memory; the pool's
    H100 price is not the A100's, so the fleet's A100 price applies."""
    folder = repository(tmp_path)
    text = GPT2_ON_H100_PARTITION.replace("--gres=gpu:8", "--gres=gpu:a100-80gb:8")
    (folder / "train.slurm").write_text(text)
    [job] = check_json(folder, monkeypatch, "train.slurm")["jobs"]
    estimates = job["estimates"]
    assert (estimates["gpu"], estimates["sources"]["gpu"]) == ("A100-80GB", "catalog")
    assert estimates["sources"]["memory.gpu_bytes"] != "fleet"
    assert (estimates["price_per_gpu_hour"], estimates["sources"]["price_per_gpu_hour"]) == (
        1.2, "fleet")  # fmt: skip


def test_the_fleets_gpus_per_node_counts_only_with_stated_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two nodes of a pool of 8-GPU nodes are 16 GPUs (``fleet``); without a node count the
    job may run on one to eight GPUs of a node, so its world size is a guess (``default``)."""
    folder = repository(tmp_path)
    head = "#!/bin/bash\n#SBATCH --partition=gpu-h100\n"
    (folder / "two.slurm").write_text(f"{head}#SBATCH --nodes=2\nsrun python train.py\n")
    (folder / "any.slurm").write_text(f"{head}srun python train.py\n")
    jobs = {j["id"]: j["estimates"] for j in check_json(folder, monkeypatch, ".")["jobs"]}
    assert (jobs["two.slurm"]["gpus"], jobs["two.slurm"]["sources"]["gpus"]) == (16, "fleet")
    # Without a node count the GPUs are a guess over one node's plausible counts (ranges).
    assert jobs["any.slurm"]["sources"]["gpus"] == "default"
    assert jobs["any.slurm"]["ranges"]["/gpus"] == [1, 8]


def test_a_locked_fleet_key_stays_and_the_attempt_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pack locks ``prices``: the repository's cheaper H100 is refused (TL906, at the
    config's line) while its unlocked ``default-gpu`` applies."""
    config = '[fleet]\ndefault-gpu = "L4"\nprices = { "H100-SXM" = 0.5 }\n'
    folder = repository(tmp_path, config)
    (folder / "train.slurm").write_text(GPT2_ON_H100_PARTITION)
    (folder / "cpu.slurm").write_text("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:1\n"
                                      "srun python train.py\n")  # fmt: skip
    report = check_json(folder, monkeypatch, ".")
    jobs = {j["id"]: j["estimates"] for j in report["jobs"]}
    assert jobs["train.slurm"]["price_per_gpu_hour"] == 2.2  # the pack's locked price
    assert jobs["cpu.slurm"]["gpu"] == "L4"  # the repository's default-gpu
    [lock] = [f for f in report["findings"] if f["rule"] == "TL906"]
    assert "fleet.prices" in lock["message"]
    assert (lock["file"], lock["line"]) == (".trainlint.toml", 6)


# ---------------------------------------------------------------- packs layered


def fleet_pack(name: str, fleet: dict[str, Any], locks: dict[str, str] | None = None) -> Pack:
    """A pack that holds only a fleet (and its locks), like examples/fleet-pack."""
    trainlint: dict[str, Any] = {"fleet": fleet}
    if locks is not None:
        trainlint["locks"] = {"fleet": locks}
    return dataclasses.replace(
        BUILTIN, name=name, modules={}, tests={}, rules=(), data={"trainlint": trainlint}
    )


def test_a_later_pack_changes_unlocked_fleet_keys_only() -> None:
    org = fleet_pack("org", {"default-gpu": "H100", "gpus-per-node": 8}, {"default-gpu": "exact"})
    team = fleet_pack("team", {"default-gpu": "L4", "gpus-per-node": 4})
    pack, _, violations = layer([BUILTIN, org, team])
    params = EstimateParams.of(pack.data, pack.name)
    assert params.fleet is not None
    assert (params.fleet.default_gpu, params.fleet.gpus_per_node) == ("H100-SXM", 4)
    [violation] = violations
    assert (violation.lock, violation.pack, violation.where) == (
        "fleet.default-gpu", "org", "pack 'team'")  # fmt: skip
    assert violation.detail == "'L4' differs from the locked 'H100-SXM'"


def test_the_same_gpu_spelt_otherwise_keeps_a_lock() -> None:
    """Locks compare what a fleet means: ``h100`` is the locked ``H100-SXM``."""
    org = fleet_pack("org", {"default-gpu": "H100-SXM"}, {"default-gpu": "exact"})
    team = fleet_pack("team", {"default-gpu": "h100"})
    assert layer([BUILTIN, org, team])[2] == []


@pytest.mark.parametrize(
    ("fleet", "locks", "message"),
    [
        ({"default-gpu": "H100-SMX"}, None,
         r"pack 'org': data.trainlint.fleet: default-gpu: .*did you mean 'H100-SXM'"),
        ({"default-gpu": "L4"}, {"pools": "exact"}, r"fleet lock 'pools' names no key"),
        ({"default-gpu": "L4"}, {"default-gpu": "same"}, r"fleet lock 'default-gpu': want"),
    ],
)  # fmt: skip
def test_a_bad_fleet_in_a_pack_is_a_policy_error_naming_it(
    fleet: dict[str, Any], locks: dict[str, str] | None, message: str
) -> None:
    with pytest.raises(PolicyError, match=message):
        layer([BUILTIN, fleet_pack("org", fleet, locks)])


def test_a_pools_fabric_replaces_the_default_network(tmp_path: Path) -> None:
    """Two nodes on the 3,200 Gb/s pool all-reduce far faster than over the default 200 Gb/s
    NIC (``network_bytes_per_s``): the fabric is 400 GB/s per node, not 25 (16x the bandwidth;
    a latency term, where the formulas have one, keeps the ratio below that)."""
    text = GPT2_ON_H100_PARTITION.replace("--nodes=1", "--nodes=2").replace("--nnodes 1", "")
    job = one_job(tmp_path, "train.slurm", text)
    fleet = example_fleet()
    on_fabric = estimate(job, EstimateParams().model_copy(update={"fleet": fleet}))
    plain_pools = [p.model_copy(update={"interconnect": None}) for p in fleet.pools]
    plain = fleet.model_copy(update={"pools": plain_pools})
    on_default = estimate(job, EstimateParams().model_copy(update={"fleet": plain}))
    assert on_fabric.gpus == on_default.gpus == 16
    fast, slow = on_fabric.comm.allreduce_s, on_default.comm.allreduce_s
    assert fast is not None and slow is not None
    assert slow > 4 * fast
