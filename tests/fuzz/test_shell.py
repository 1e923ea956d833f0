"""Shell expansion fuzzed with hypothesis on generated scripts of long variable chains: only
SourceError escapes ``parse_script``, and what expansion hands out stays within its budget.

Each script seeds a value, then chains assignments that reuse earlier variables
(``B=$A$A…``, ``${A:-$B}``, ``A+=$A``, arrays spread with ``"${A[@]}"``, ``export A``,
assignments in branches) and commands that expand them (``echo $A $A``, ``bash -c "$A"``).
The bound is the documented one (``shell.words.ExpansionBudget``): the words and values handed
out hold at most the script's own text twice over plus the budget; nothing is measured in time.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fast_loop import examples
from tests.fuzz.test_readers import FUZZ
from trainlint.errors import SourceError
from trainlint.sources import read_document
from trainlint.sources.base import Document, Input, Skipped
from trainlint.sources.shell import Script, parse_inline, parse_script
from trainlint.sources.shell.words import ExpansionBudget

NAMES = ["A", "B", "C", "D"]


@st.composite
def reference(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(NAMES))
    return draw(st.sampled_from([
        f"${name}", f"${{{name}}}", f'"${name}"', f"${{{name}:-${name}}}", f"${{{name}:=x}}",
        f"${{{name}:+${name}${name}}}", f"${{#{name}}}", f'"${{{name}[@]}}"', f"${{{name}[@]}}",
        f"${{{name}[0]}}", f"$(({name}*2))", "x", "' '", '" "', "--flag",
    ]))  # fmt: skip


@st.composite
def statement(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(NAMES))
    word = "".join(draw(st.lists(reference(), min_size=1, max_size=12)))
    words = " ".join(draw(st.lists(reference(), min_size=1, max_size=6)))
    return draw(st.sampled_from([
        f"{name}={word}", f"{name}+={word}", f"{name}=({words})", f'{name}+=("${{{name}[@]}}")',
        f"export {name}", f"export {name}={word}", f"echo {words}", f'bash -c "${name}"',
        f"if x; then {name}={word}; fi", f"{name}={word} torchrun {words}", f"unset {name}",
        f"f() {{ {name}={word}; }}", f"( {name}={word} )", f"cat > {word}",
    ]))  # fmt: skip


@st.composite
def scripts(draw: st.DrawFn) -> str:
    """A seed (one word, or words to split), doubled up to the per-value cap, then runs of
    one statement repeated: the shape of ``B=$A$A…`` 12,000 times, at a test's scale."""
    seed = "x" * draw(st.integers(1, 2000)) if draw(st.booleans()) else "a b " * 50
    lines = [f'A="{seed}"', *["A=$A$A"] * draw(st.integers(0, 12))]
    for _ in range(draw(st.integers(1, 6))):
        repeat = draw(st.integers(1, 60))
        lines += [draw(statement())] * repeat
    return "\n".join(lines) + "\n"


def _handed_out(script: Script) -> int:
    words = sum(len(w.text or "") for c in script.commands for w in c.words)
    values = sum(len(a.value or "") for a in script.assignments)
    return words + values + sum(len(path) for path in script.written)


def _bound(text: str) -> int:
    """Words and values come from their own text (once for words, once for values) or from
    growth the budget paid for."""
    return 2 * len(text) + ExpansionBudget.for_text(text).left


@settings(FUZZ, max_examples=examples(80))
@given(text=scripts())
def test_variable_chains_stay_within_the_budget(text: str) -> None:
    try:
        script = parse_script(text)
    except SourceError:
        return
    assert _handed_out(script) <= _bound(text)
    for command in script.commands:
        if command.name.text == "bash" and command.args and command.args[-1].text is not None:
            inline = command.args[-1]
            commands = parse_inline(inline)
            assert _handed_out(Script(commands)) <= _bound(inline.text or "")


@settings(FUZZ, max_examples=examples(40))
@given(text=scripts())
def test_the_launch_script_reader_takes_any_chain(text: str) -> None:
    """The whole reader (launch analysis of every command, ``bash -c`` strings, redaction)."""
    doc = read_document(Input("run.sh", "#!/bin/bash\n" + text))
    assert isinstance(doc, Document | Skipped)
