"""submitit scripts and Hydra's submitit launcher: executor parameters read as the #SBATCH
options they become (tests/sources/fixtures/submitit, MANIFEST.tsv), the launcher's default
time limit, and a launcher config alone being no run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sources.helpers import rows
from trainlint.lint import CheckOptions, check
from trainlint.sources import finish, read_document, submitit
from trainlint.sources.base import Document, Input

FIXTURES = Path(__file__).parent / "fixtures" / "submitit"


def read(path: str, text: str) -> Document:
    doc = read_document(Input(path, text))
    assert isinstance(doc, Document), doc
    return doc


def test_submitit_docs_example_reads_module_constants() -> None:
    """``nodes=NUM_NODES`` after ``NUM_NODES = 2``: the constant's value, at the keyword."""
    doc = read("torch_distributed.py", (FIXTURES / "torch_distributed.py").read_text())
    assert doc.format == "submitit" and doc.launches_training
    assert rows(doc) == [
        ("/resources/nodes", 2, 26, 9),
        ("/resources/gpus_per_node", 8, 27, 9),
        ("/tags/partition", "devlab", 30, 9),
        ("/resources/placement/partition", "devlab", 30, 9),
    ]
    # No timeout_min: submitit's SlurmExecutor asks sbatch for --time=5 (minutes).
    assert [(d.pointer, d.value) for d in doc.defaults] == [("/resources/time_limit_s", 300.0)]


AUTO = """\
import submitit

executor = submitit.AutoExecutor(folder="logs/%j")
executor.update_parameters(
    name="llama-sft",
    nodes=4,
    gpus_per_node=8,
    tasks_per_node=8,
    timeout_min=720,
    slurm_partition="learnfair",
    slurm_constraint="volta32gb",
    slurm_additional_parameters={"account": "nlp", "comment": "team=nlp,project=llm"},
)
if debug:
    executor.update_parameters(timeout_min=10)
job = executor.submit(train, cfg)
"""


def test_auto_executor_parameters_are_sbatch_options() -> None:
    facts = {f.pointer: f.value for f in read("submit.py", AUTO).facts}
    assert facts == {
        "/resources/scheduler": "slurm",
        "/name": "llama-sft",
        "/resources/nodes": 4,
        "/resources/gpus_per_node": 8,
        "/resources/time_limit_s": 43200.0,  # 720 minutes; the debug branch is not the run
        "/tags/partition": "learnfair",
        "/resources/placement/partition": "learnfair",
        "/resources/placement/constraint": "volta32gb",  # for the org fleet's pools
        "/resources/gpu/model": "V100-32GB",
        "/resources/gpu/memory_bytes": 32 * 2**30,
        "/tags/account": "nlp",
        "/resources/placement/account": "nlp",
        "/tags/team": "nlp",
        "/tags/project": "llm",
    }


def test_slurm_executor_takes_sbatch_names_unprefixed() -> None:
    text = (
        "from submitit import SlurmExecutor\n"
        "ex = SlurmExecutor(folder='x')\n"
        "ex.update_parameters(time=90, nodes=2, ntasks_per_node=4, gres='gpu:a100:4',"
        " partition='gpu')\n"
    )
    facts = {f.pointer: f.value for f in read("s.py", text).facts}
    assert facts["/resources/time_limit_s"] == 5400.0
    assert (facts["/resources/nodes"], facts["/resources/gpus_per_node"]) == (2, 4)
    assert facts["/resources/gpu/model"] == "A100-40GB"


@pytest.mark.parametrize(
    "text",
    [
        "import submitit\n",  # imports only
        "executor.update_parameters(nodes=2)\n",  # another library's update_parameters
    ],
)
def test_not_claimed_without_submitit_and_parameters(text: str) -> None:
    assert submitit.recognise(Input("x.py", text)) == 0.0


PRIMARY = """\
defaults:
  - _self_
  - override hydra/launcher: submitit_slurm
trainer:
  max_epochs: 10
hydra:
  launcher:
    nodes: 2
    gpus_per_node: 4
    constraint: a100
    name: ${hydra.job.name}
"""


def _hydra_facts(tmp_path: Path, files: dict[str, str], root: str) -> Document:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    file = Input(str(tmp_path / root), (tmp_path / root).read_text())
    doc = read_document(file)
    assert isinstance(doc, Document)
    return finish(doc, file)


def test_hydra_submitit_launcher_block_is_the_slurm_job(tmp_path: Path) -> None:
    doc = _hydra_facts(tmp_path, {"configs/train.yaml": PRIMARY}, "configs/train.yaml")
    facts = {f.pointer: (f.value, f.location.line) for f in doc.facts}
    assert facts["/resources/scheduler"] == ("slurm", 8)
    assert facts["/resources/nodes"] == (2, 8)
    assert facts["/resources/gpus_per_node"] == (4, 9)
    assert facts["/resources/placement/constraint"] == ("a100", 10)
    assert facts["/resources/gpu/model"] == ("A100-40GB", 10)
    assert "/name" not in facts  # ${hydra.job.name}: filled in at run time
    # No timeout_min: the plugin's BaseQueueConf.timeout_min, 60 minutes.
    assert [(d.pointer, d.value) for d in doc.defaults] == [("/resources/time_limit_s", 3600.0)]


def test_a_repo_launcher_file_selected_by_a_primary_config(tmp_path: Path) -> None:
    """``override hydra/launcher: slurm`` picks the repo's hydra/launcher/slurm.yaml, which
    extends submitit_slurm: its keys win, located in that file."""
    launcher = (FIXTURES / "sfr/configs/hydra/launcher/slurm.yaml").read_text()
    launcher = launcher.replace("gpus_per_node: 0", "gpus_per_node: 2")
    files = {
        "configs/train.yaml": PRIMARY.replace("submitit_slurm", "slurm").split("hydra:")[0],
        "configs/hydra/launcher/slurm.yaml": launcher,
    }
    doc = _hydra_facts(tmp_path, files, "configs/train.yaml")
    where = {f.pointer: (f.value, Path(f.location.file).name) for f in doc.facts}
    assert where["/resources/time_limit_s"] == (43200.0, "slurm.yaml")
    assert where["/resources/gpus_per_node"] == (2, "slurm.yaml")
    assert doc.defaults == []


def test_launcher_configs_alone_are_no_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sfr launcher file (CPU, 12 h) and the plugin's example (a sweep's `task: 1`) hold
    no run of their own; a primary config selecting the launcher with GPUs is a SLURM job that
    the plugin bounds at 60 minutes: no TL403."""
    sfr = (FIXTURES / "sfr/configs/hydra/launcher/slurm.yaml").read_text()
    (tmp_path / "configs/hydra/launcher").mkdir(parents=True)
    (tmp_path / "configs/hydra/launcher/slurm.yaml").write_text(sfr)
    (tmp_path / "configs/train.yaml").write_text(PRIMARY)
    monkeypatch.chdir(tmp_path)
    report = check([Path(".")], CheckOptions())
    (job,) = report.jobs
    assert job.id == "configs/train.yaml" and job.resources.scheduler == "slurm"
    assert "TL403" not in {f.rule for f in report.findings}


def test_the_plugin_example_selects_slurm_with_its_default_limit() -> None:
    """hydra's own example: ``override hydra/launcher: submitit_slurm`` and no settings."""
    path = FIXTURES / "hydra_example/config.yaml"
    doc = read(str(path), path.read_text())
    assert {f.pointer: f.value for f in doc.facts} == {"/resources/scheduler": "slurm"}
    assert [(d.pointer, d.value) for d in doc.defaults] == [("/resources/time_limit_s", 3600.0)]
