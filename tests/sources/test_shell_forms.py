"""Shell forms of real launch scripts (issue 22 item 7): commands built in heredocs, launch
lines behind a prefix of unknown value, debugpy-run. Read statically; nothing is run."""

from __future__ import annotations

import pytest

from trainlint.sources import read_document
from trainlint.sources.base import Document, Input
from trainlint.sources.shell import parse_script


def facts(text: str) -> dict[str, object]:
    doc = read_document(Input("run.sh", "#!/bin/bash\n" + text))
    assert isinstance(doc, Document)
    return {fact.pointer: fact.value for fact in doc.facts}


@pytest.mark.parametrize("run", ['eval "$cmd"', "$cmd", "eval $cmd"])
def test_a_command_built_in_a_heredoc_is_read_where_it_runs(run: str) -> None:
    text = (
        "N=8\nread -r -d '' cmd <<EOF\ntorchrun --nproc_per_node $N \\\n"
        f"  train.py --save_steps 10\nEOF\n{run}\n"
    )
    found = facts(text)
    assert found["/launcher/kind"] == "torchrun"
    assert found["/resources/gpus_per_node"] == 8
    assert found["/checkpoint/every_steps"] == 10.0


def test_a_quoted_heredoc_delimiter_expands_nothing_and_read_without_d_takes_one_line() -> None:
    text = (
        "N=8\nread -r -d '' raw <<'EOF'\ntorchrun --nproc_per_node $N train.py\nEOF\n"
        "read -r first <<EOF\nline one\nline two\nEOF\necho $raw $first\n"
    )
    echo = parse_script(text).commands[-1]
    assert [w.text for w in echo.args] == [
        "torchrun", "--nproc_per_node", "$N", "train.py", "line", "one",
    ]  # fmt: skip


def test_unknown_words_before_a_distributed_launcher_only_wrap_it() -> None:
    text = '$PREFIX "${PROFILE_CMD[@]}" python -m torch.distributed.run --nproc_per_node 8 t.py\n'
    found = facts(text)
    assert (found["/launcher/kind"], found["/resources/gpus_per_node"]) == ("torchrun", 8)
    assert "/launcher/kind" not in facts("$PREFIX python train.py --save_steps 4\n")


def test_debugpy_run_of_a_script() -> None:
    found = facts("debugpy-run -p :5678 train.py -- --save_steps 5\n")
    assert (found["/launcher/entrypoint"], found["/checkpoint/every_steps"]) == ("train.py", 5.0)


def test_a_script_fed_to_sbatch_through_a_heredoc_is_read_at_its_own_lines() -> None:
    text = (
        "N=8\nsbatch <<EOF\n#!/bin/bash\n#SBATCH --nodes=2\n"
        "srun torchrun --nproc_per_node $N train.py --save_steps 10\nEOF\n"
        "bash run.sh <<EOF\ntorchrun --nproc_per_node 2 other.py\nEOF\n"  # input, not a script
    )
    doc = read_document(Input("submit.sh", "#!/bin/bash\n" + text))
    assert isinstance(doc, Document)
    found = {fact.pointer: (fact.value, fact.location.line) for fact in doc.facts}
    assert found["/launcher/kind"] == ("torchrun", 6)
    assert found["/resources/gpus_per_node"] == (8, 6)
    assert found["/launcher/entrypoint"] == ("train.py", 6)


def test_bash_c_of_a_partly_unknown_string_reads_its_known_commands() -> None:
    text = (
        'CMD="\ncd ${MEGATRON_PATH};\nexport PYTHONPATH=${MEGATRON_PATH}:${PYTHONPATH};\n'
        'torchrun --nproc_per_node 4 ${MEGATRON_PATH}/train.py --save_steps 7"\n'
        'srun bash -x -c "${CMD}"\n'
    )
    found = facts(text)
    assert (found["/launcher/kind"], found["/resources/gpus_per_node"]) == ("torchrun", 4)
    assert found["/checkpoint/every_steps"] == 7.0


def test_the_sbatch_headers_of_a_heredoc_fed_script_are_the_jobs() -> None:
    text = (
        "# submit with: bash submit.sh\nN=8\nsbatch <<EOF\n#!/bin/bash\n#SBATCH --nodes=2\n"
        "#SBATCH --gres=gpu:h100:8\n#SBATCH --time=04:00:00\n"
        "srun torchrun --nnodes 2 --nproc_per_node $N train.py\nEOF\n"
    )
    doc = read_document(Input("submit.sh", "#!/bin/bash\n" + text))
    assert isinstance(doc, Document)
    found = {fact.pointer: (fact.value, fact.location.line) for fact in doc.facts}
    assert found["/resources/time_limit_s"] == (14400.0, 8)
    assert found["/resources/gpu/model"] == ("H100-SXM", 7)
    assert found["/resources/scheduler"] == ("slurm", 6)


@pytest.mark.parametrize("gres", ["gpu:your_own_gpu_per_node", "gpu:<gpus>", "gpu:CHANGEME_type"])
def test_a_template_blank_in_gres_requests_no_gpu_count(gres: str) -> None:
    found = facts(f"#SBATCH --gres={gres}\nsrun python train.py --save_steps 5\n")
    assert "/resources/gpus_per_node" not in found or found["/resources/gpus_per_node"] is None
    assert "/resources/gpus_per_node" in facts("#SBATCH --gres=gpu:a100\nsrun python t.py\n")


@pytest.mark.parametrize(
    "folder",
    [
        '$(cd -- "$(dirname "$0")" >/dev/null 2>&1 ; pwd -P)',
        '$(dirname "$0")',
        "`dirname $0`",
        '$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)',
        '$(cd "$(dirname "${BASH_SOURCE[0]}")" &> /dev/null && pwd)',
        '$(dirname "$(readlink -f "$0")")',
        "$(realpath $(dirname $0))",
    ],
)
def test_the_script_folder_idiom_resolves_beside_the_script(folder: str) -> None:
    """nanotron's examples: ``EXAMPLE_PATH=$(cd -- "$(dirname "$0")" ...; pwd -P)`` then
    ``--config-file $EXAMPLE_PATH/config.yaml``: the config is beside the script."""
    launch = "torchrun --nproc_per_node 8 run_train.py --config-file $EXAMPLE_PATH/c.yaml"
    text = f"EXAMPLE_PATH={folder}\n{launch}\n"
    doc = read_document(Input("examples/train.sh", text))
    assert isinstance(doc, Document)
    assert [r.path for r in doc.references] == ["./c.yaml"]


@pytest.mark.parametrize("other", ["$(pwd)", "$(dirname $CONFIG)", "$(cd $(dirname $0)/..; pwd)"])
def test_other_command_substitutions_stay_unknown(other: str) -> None:
    text = f"DIR={other}\ntorchrun --nproc_per_node 8 run_train.py --config-file $DIR/c.yaml\n"
    doc = read_document(Input("examples/train.sh", text))
    assert isinstance(doc, Document)
    assert all(r.path != "./c.yaml" for r in doc.references)
