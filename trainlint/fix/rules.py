"""One fixer per builtin rule that has a mechanical fix, keyed by the rule's slug: each
returns the rule's ``Fix`` for one finding, or None when the text at the finding is not a
shape it can edit with certainty (a variable, an expression, an override elsewhere)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from trainlint.findings import Fix, TextEdit
from trainlint.fix import slurm
from trainlint.fix.env import remove_setting
from trainlint.fix.retention import retention_limit
from trainlint.fix.site import Site
from trainlint.fix.values import boolean_text, literal_at, remove_flag, replace_value

Fixer = Callable[[Site], "Fix | None"]


def _fix(title: str, safe: bool, edit: TextEdit | None) -> Fix | None:
    return Fix(title=title, safe=safe, edits=(edit,)) if edit is not None else None


def log_every_step(site: Site) -> Fix | None:
    """TL301: the rule's suggested interval (safe: what is logged changes, not the training)."""
    every, suggested = site.job.logging.every_steps, site.params.get("suggested_every_steps")
    if every is None or not isinstance(suggested, int) or isinstance(suggested, bool):
        return None
    edit = replace_value(site, "/logging/every_steps", every, str(suggested))
    return _fix(f"Log every {suggested} steps instead of every step", True, edit)


_ENV_POINTER = re.compile(r"^/env/(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")


def debug_setting(site: Site) -> Fix | None:
    """TL302, TL303: the debug variable's setting removed (safe: only logs and launch
    blocking change). Which variable is the finding's: the one stated at its location."""
    for pointer, location in site.job.provenance.items():
        match = _ENV_POINTER.match(pointer)
        here = (location.file, location.line, location.column)
        if match and here == (site.finding.file, site.finding.line, site.finding.column):
            name = match.group("name")
            return _fix(f"Remove {name}={site.job.env.get(name, '')}", True,
                        remove_setting(site, name))  # fmt: skip
    return None


def _switch_off(site: Site, pointer: str, title: str, *, safe: bool) -> Fix | None:
    """A boolean stated true at ``pointer``, stated false instead, spelled as the file
    spells its booleans (``False`` in Python, ``false`` elsewhere)."""
    edit = replace_value(site, pointer, True, "false")
    source = site.source(edit.path) if edit is not None else None
    if edit is None or source is None:
        return None
    old = source.line(edit.start_line)[edit.start_column - 1 : edit.end_column - 1]
    return _fix(title, safe, replace(edit, new_text=boolean_text(False, old)))


def profiler_always_on(site: Site) -> Fix | None:
    """TL304: the profiler off (safe: profiles are diagnostics, not the training)."""
    pointer, title = "/logging/profiler/enabled", "Turn the profiler off"
    if site.job.logging.profiler.enabled is not True:
        return None
    flag = remove_flag(site, pointer)
    return _fix(title, True, flag) if flag else _switch_off(site, pointer, title, safe=True)


def per_step_diagnostics(site: Site) -> Fix | None:
    """TL306: the per-step diagnostic at the finding off (safe): its bare flag removed
    (Megatron's ``--log-params-norm``), or its value stated true set to false."""
    for name, on in site.job.logging.per_step_diagnostics.items():
        pointer = f"/logging/per_step_diagnostics/{name}"
        if on and site.stated_at(pointer) is not None:
            title = f"Turn the per-step {name} off"
            flag = remove_flag(site, pointer)
            return _fix(title, True, flag) if flag else _switch_off(site, pointer, title, safe=True)
    return None


def needless_recompute(site: Site) -> Fix | None:
    """TL107: activation checkpointing off (unsafe: memory per GPU grows, by the estimate)."""
    if site.job.training.activation_checkpointing is not True:
        return None
    return _switch_off(site, "/training/activation_checkpointing",
                       "Turn activation checkpointing off", safe=False)  # fmt: skip


def checkpoint_too_frequent(site: Site) -> Fix | None:
    """TL201: the estimate's suggested interval (unsafe: a crash loses more steps)."""
    every = site.job.checkpoint.every_steps
    suggested = site.job.estimates.checkpoint.suggested_every_steps
    if every is None or suggested is None or suggested <= every:
        return None
    edit = replace_value(site, "/checkpoint/every_steps", every, str(suggested))
    return _fix(f"Checkpoint every {suggested} steps", False, edit)


def no_mixed_precision(site: Site) -> Fix | None:
    """TL105: ``bf16: false`` (or ``fp16``, the precision the estimate names) set true
    (unsafe: numerics change). A precision stated any other way is left to the user."""
    target = site.job.estimates.mixed_precision.precision
    at = site.stated_at("/training/precision")
    source = site.source(site.finding.file) if at is not None else None
    literal = literal_at(source, at) if at is not None and source is not None else None
    if literal is None or source is None or literal.key != target:
        return None
    edit = replace_value(site, "/training/precision", False, "true")
    if edit is None:
        return None
    new = replace(edit, new_text=boolean_text(True, literal.text))
    return _fix(f"Train in {target} mixed precision", False, new)


FIXERS: dict[str, Fixer] = {
    "log-every-step": log_every_step,
    "debug-logging": debug_setting,
    "blocking-debug": debug_setting,
    "profiler-always-on": profiler_always_on,
    "per-step-diagnostics": per_step_diagnostics,
    "needless-recompute": needless_recompute,
    "checkpoint-too-frequent": checkpoint_too_frequent,
    "no-time-limit": slurm.time_limit,
    "unbounded-checkpoints": retention_limit,
    "no-mixed-precision": no_mixed_precision,
}
