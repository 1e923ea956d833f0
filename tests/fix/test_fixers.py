"""Each fix both ways: the exact text it writes, and the text it leaves alone where the value
is not a literal it can read (a variable, an expression), where another line also sets it, or
where removing a line would empty a block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fix.helpers import CONFIG, SLURM, check, project, texts

LOGGING = "logging_steps: 1   # per-step curve while tuning"


def fixed(root: Path, *flags: str) -> dict[str, str]:
    check(root, "--fix", *flags)
    return texts(root)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (LOGGING, "logging_steps: 10   # per-step curve while tuning"),
        ("logging_steps: '1'", "logging_steps: '10'"),
        ("logging_steps: 1.0", "logging_steps: 10"),
    ],
)
def test_logging_interval_in_yaml(in_tmp: Path, written: str, expected: str) -> None:
    project(in_tmp, config=CONFIG.replace(LOGGING, written))
    assert fixed(in_tmp)["sft.yaml"] == CONFIG.replace(LOGGING, expected)


@pytest.mark.parametrize("flag", ["--logging_steps 1", "--logging_steps=1"])
def test_logging_interval_on_the_command_line(in_tmp: Path, flag: str) -> None:
    config = CONFIG.replace(LOGGING + "\n", "")
    slurm = SLURM.replace("--output_dir", f"{flag} \\\n    --output_dir")
    project(in_tmp, slurm=slurm, config=config)
    assert fixed(in_tmp)["train.slurm"] == slurm.replace(flag, flag[:-1] + "10").replace(
        "export NCCL_DEBUG=INFO\n", ""
    )


def test_logging_interval_overridden_on_another_line_is_left_alone(in_tmp: Path) -> None:
    """The config says 1 and the launch says 1 too: which one a reader edits is a choice."""
    slurm = SLURM.replace("--output_dir", "--logging_steps 1 \\\n    --output_dir")
    project(in_tmp, slurm=slurm)
    after = fixed(in_tmp)
    assert after["sft.yaml"] == CONFIG
    assert "--logging_steps 1 \\" in after["train.slurm"]


def test_logging_interval_in_json_keeps_the_layout(in_tmp: Path) -> None:
    config = '{\n  "model_name_or_path": "meta-llama/Meta-Llama-3-8B",\n  "bf16": true,\n' \
        '  "max_steps": 2000,\n  "logging_steps": 1,\n  "report_to": ["wandb"]\n}\n'  # fmt: skip
    slurm = SLURM.replace("sft.yaml", "sft.json")
    project(in_tmp, slurm=slurm, config="")
    (in_tmp / "sft.yaml").unlink()
    (in_tmp / "sft.json").write_text(config)
    expected = config.replace('"logging_steps": 1,', '"logging_steps": 10,')
    assert fixed(in_tmp)["sft.json"] == expected


def test_debug_prefix_of_a_command_is_removed(in_tmp: Path) -> None:
    slurm = SLURM.replace("export NCCL_DEBUG=INFO\n", "").replace(
        "torchrun --standalone", "CUDA_LAUNCH_BLOCKING=1 NCCL_DEBUG=INFO torchrun --standalone"
    )
    project(in_tmp, slurm=slurm)
    assert fixed(in_tmp)["train.slurm"] == slurm.replace(
        "CUDA_LAUNCH_BLOCKING=1 NCCL_DEBUG=INFO torchrun", "torchrun"
    )


def test_time_limit_added_from_the_upper_estimate(in_tmp: Path) -> None:
    project(in_tmp, slurm=SLURM.replace("#SBATCH --time=24:00:00\n", ""))
    after = fixed(in_tmp)["train.slurm"].splitlines()
    added = [line for line in after if line.startswith("#SBATCH --time=")]
    assert len(added) == 1
    assert after.index(added[0]) == after.index('#SBATCH --comment="team=nlp project=llama"') + 1
    assert json.loads(check(in_tmp, "--select", "no-time-limit").stdout)["findings"] == []


def test_time_limit_left_alone_without_an_estimate(in_tmp: Path) -> None:
    """No model named: no run length, so no limit is invented."""
    config = CONFIG.replace("model_name_or_path: meta-llama/Meta-Llama-3-8B\n", "")
    slurm = SLURM.replace("#SBATCH --time=24:00:00\n", "")
    project(in_tmp, slurm=slurm, config=config)
    assert "--time" not in fixed(in_tmp)["train.slurm"]


UNBOUNDED = CONFIG.replace("save_total_limit: 3\n", "")
UNBOUNDED = UNBOUNDED.replace("save_steps: 500", "save_steps: 100")


def test_retention_limit_added_after_save_steps(in_tmp: Path) -> None:
    project(in_tmp, config=UNBOUNDED)
    assert fixed(in_tmp, "--select", "TL202")["sft.yaml"] == UNBOUNDED.replace(
        "save_steps: 100\n", "save_steps: 100\nsave_total_limit: 3\n"
    )


def test_retention_limit_on_a_continued_command_line(in_tmp: Path) -> None:
    config = UNBOUNDED.replace("save_steps: 100\n", "")
    slurm = SLURM.replace("--output_dir", "--save_steps 100 \\\n    --output_dir")
    project(in_tmp, slurm=slurm, config=config)
    assert fixed(in_tmp, "--select", "TL202")["train.slurm"] == slurm.replace(
        "--save_steps 100 \\\n", "--save_steps 100 \\\n    --save_total_limit 3 \\\n"
    )


def test_retention_limit_left_alone_where_a_variable_names_it(in_tmp: Path) -> None:
    """A launch that passes the limit from a variable trainlint cannot read: adding a second
    one would override it."""
    slurm = SLURM.replace("--output_dir", '--save_total_limit "$KEEP" \\\n    --output_dir')
    project(in_tmp, slurm=slurm, config=UNBOUNDED)
    assert fixed(in_tmp, "--select", "TL202") == {"sft.yaml": UNBOUNDED, "train.slurm": slurm}


def test_checkpoint_interval_only_with_unsafe_fixes(in_tmp: Path) -> None:
    config = CONFIG.replace("save_steps: 500", "save_steps: 10")
    project(in_tmp, config=config)
    assert fixed(in_tmp, "--select", "TL201")["sft.yaml"] == config
    after = fixed(in_tmp, "--select", "TL201", "--unsafe-fixes")["sft.yaml"]
    [line] = [line for line in after.splitlines() if line.startswith("save_steps: ")]
    assert int(line.removeprefix("save_steps: ")) > 10
    assert after == config.replace("save_steps: 10\n", line + "\n")


def test_mixed_precision_only_with_unsafe_fixes(in_tmp: Path) -> None:
    config = CONFIG.replace("bf16: true", "fp16: false\nbf16: false  # fp32 for now")
    project(in_tmp, config=config)
    assert fixed(in_tmp, "--select", "TL105")["sft.yaml"] == config
    after = fixed(in_tmp, "--select", "TL105", "--unsafe-fixes")["sft.yaml"]
    assert after == config.replace("bf16: false", "bf16: true")
    assert json.loads(check(in_tmp, "--select", "TL105").stdout)["findings"] == []


def test_mixed_precision_left_alone_at_another_switch(in_tmp: Path) -> None:
    """fp32 located at ``fp16: false`` on an H100, whose estimate names bf16: turning fp16
    on instead is a choice the user makes."""
    config = CONFIG.replace("bf16: true", "bf16: false\nfp16: false")
    project(in_tmp, config=config)
    result = check(in_tmp, "--fix", "--select", "TL105", "--unsafe-fixes")
    assert '"TL105"' in result.stdout
    assert texts(in_tmp)["sft.yaml"] == config
