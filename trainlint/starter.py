"""The commented starter config ``trainlint init`` writes: every key, with what it does."""

from __future__ import annotations

STARTER_TOML = """\
# trainlint configuration. `trainlint rules` lists the rules, `trainlint rule TL201` explains one.
# The closest .trainlint.toml / .trainlint.yaml / pyproject.toml [tool.trainlint] to a checked
# file applies. Keys are spelled as in ruff; every one is optional.

# Inherit from a shared config; keys set here win.
# extend = "../.trainlint.toml"

# Rules to run: ids, prefixes or slugs (default: every builtin rule and every rule of
# every pack listed below). extend-select adds to the default.
# select = ["TL1", "TL2", "TL4"]
# extend-select = []
ignore = []

# Exit 1 when a finding at or above this severity counts: error, warning or info.
fail-on = "warning"

# Findings recorded with `trainlint check --write-baseline trainlint-baseline.json` do not
# count; new ones do.
# baseline = "trainlint-baseline.json"

# Rules that do not apply to some files (globs relative to this file).
[per-file-ignores]
# "experiments/**" = ["TL401"]

# Reviewed exceptions. A waiver needs a reason; after `expires` it stops suppressing and is
# reported (TL905).
# [[waivers]]
# rule = "TL201"
# path = "configs/debug/*.yaml"
# reason = "debug runs save every few steps on purpose"
# approved_by = "platform-team"
# expires = 2027-03-31

# Rule options (see `trainlint rule <id>`), and the estimator's assumptions.
[params.checkpoint-too-frequent]
# max_overhead_fraction = 0.05

[params.estimate]
# mfu = 0.4    # one utilisation for every job; unset: from published runs like each job
# prices = { "H100-SXM" = 2.49 }   # negotiated USD per GPU-hour

# The GPUs your jobs run on when their files do not say (`#SBATCH --gres=gpu:8`): a default,
# and pools matched on a partition, node selector, instance type or cloud. Numbers from here
# are marked `fleet` in `trainlint estimate`.
# [fleet]
# default-gpu = "H100-SXM"
# [[fleet.pools]]
# match = { partition = "gpu-a100*" }
# gpu = "A100-80GB"
# gpus-per-node = 8

# Which format a glob of ambiguous files is (see `trainlint formats`).
[formats]
# "recipes/*.yaml" = "axolotl"
"""
