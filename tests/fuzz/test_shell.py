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
        f'if [ "${name}" = x ]; then {name}={word}; fi',
        f"case ${name} in x) {name}+=({words}) ;; esac",
        f"read -r -d '' {name} <<EOF\n{words}\nEOF",
        f"sbatch <<EOF\n{name}={word}\necho {words}\nEOF",
        f'{name}="a $1 {word}"', f'bash -c "${{{name}}} torchrun {words}"',
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


VALUES = st.text(alphabet="abc8M-_", min_size=0, max_size=4)
ITEMS = st.lists(
    st.lists(st.text(alphabet="abz-=19", min_size=1, max_size=4), min_size=1, max_size=3),
    min_size=0,
    max_size=8,
)


@settings(FUZZ, max_examples=examples(100))
@given(value=VALUES, other=VALUES, double=st.booleans(), equal=st.booleans())
def test_a_test_on_known_values_takes_the_arm_bash_takes(
    value: str, other: str, double: bool, equal: bool
) -> None:
    """``[ "$X" = "y" ]`` / ``[[ … != … ]]`` and ``case`` on values the script states: the arm
    run is the one bash runs, read as straight-line code."""
    op = ("==" if double else "=") if equal else "!="
    test = f'[[ "$X" {op} "{other}" ]]' if double else f'[ "$X" {op} "{other}" ]'
    text = (
        f'X="{value}"\nif {test}; then R=yes; else R=no; fi\n'
        f'case "$X" in "{other}") C=same ;; *) C=other ;; esac\necho $R $C\n'
    )
    same = value == other
    assert words(text) == ["yes" if same == equal else "no", "same" if same else "other"]


@settings(FUZZ, max_examples=examples(100))
@given(items=ITEMS, quoted=st.booleans())
def test_arrays_assembled_over_lines_expand_as_bash_does(
    items: list[list[str]], quoted: bool
) -> None:
    """An array built with continuations and ``+=`` of multi-word items: ``"${A[@]}"`` keeps
    each item one word, unquoted ``${A[@]}`` splits every item into its words."""
    lines = ["A=(\\"]
    for index, item in enumerate(items):
        quoted_item = '"' + " ".join(item) + '"'
        lines.append(f"  {quoted_item} \\" if index % 2 else f")\nA+=({quoted_item} \\")
    lines.append(")")
    use = '"${A[@]}"' if quoted else "${A[@]}"
    text = "\n".join(lines) + f"\ntorchrun train.py {use}\n"
    expected = [" ".join(i) for i in items] if quoted else [w for i in items for w in i]
    assert words(text) == ["train.py", *expected]


@settings(FUZZ, max_examples=examples(100))
@given(
    parts=st.lists(
        st.one_of(st.just(None), st.text(alphabet="ab-19", min_size=1, max_size=4)), max_size=8
    )
)
def test_a_partly_unknown_string_keeps_every_known_word(parts: list[str | None]) -> None:
    """``OPTS="--a 1 $1 --b"`` split unquoted: each known word as written, one unknown word
    where each unknown part stands alone."""
    body = " ".join("$1" if part is None else part for part in parts)
    text = f'OPTS="{body}"\ntorchrun train.py $OPTS\n'
    assert words(text) == ["train.py", *parts]


def words(text: str) -> list[str | None]:
    return [w.text for w in parse_script(text).commands[-1].args]


FLAGS = st.lists(
    st.tuples(
        st.sampled_from(["--save_steps", "--logging_steps", "--max_steps", "--seed", "--x"]),
        st.integers(1, 10_000),
    ),
    max_size=5,
)


@settings(FUZZ, max_examples=examples(60))
@given(flags=FLAGS, gpus=st.integers(1, 16), run=st.sampled_from(['eval "$cmd"', "$cmd"]))
def test_a_launch_built_in_a_heredoc_reads_as_the_same_launch_written_out(
    flags: list[tuple[str, int]], gpus: int, run: str
) -> None:
    """``read -r -d '' cmd <<EOF … EOF`` then ``$cmd`` / ``eval "$cmd"``: the same facts as
    the command written as a line of the script (continuations and variables included)."""
    line = "torchrun --nproc_per_node $G \\\n  train.py " + " ".join(f"{f} {v}" for f, v in flags)
    direct = f"G={gpus}\n{line}\n"
    built = f"G={gpus}\nread -r -d '' cmd <<EOF\n{line}\nEOF\n{run}\n"
    assert _values(direct) == _values(built)


def _values(text: str) -> dict[str, object]:
    doc = read_document(Input("run.sh", "#!/bin/bash\n" + text))
    assert isinstance(doc, Document)
    return {f.pointer: f.value for f in doc.facts if f.pointer != "/launcher/command"}
