"""The static bash reader: expansion, scoping, positions, and robustness. Nothing is run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import CORPUS
from trainlint.errors import SourceError
from trainlint.sources.shell import Command, Script, Word, parse_inline, parse_script


def words(text: str, index: int = -1) -> list[str | None]:
    """The expanded argument texts of one command (the last by default)."""
    return [w.text for w in parse_script(text).commands[index].args]


def variable(text: str, name: str) -> object:
    return parse_script(text).variables.get(name, "<unset>")


def test_commands_have_exact_positions_across_continuations() -> None:
    script = parse_script("#!/bin/bash\n  torchrun \\\n    --nproc_per_node 8 \\\n\ttrain.py\n")
    (command,) = script.commands
    assert (command.line, command.column) == (2, 3)
    assert command.name == Word("torchrun", "torchrun", 2, 3)
    assert [(w.text, w.line, w.column) for w in command.args] == [
        ("--nproc_per_node", 3, 5),
        ("8", 3, 22),
        ("train.py", 4, 2),
    ]
    assert command.text == "torchrun --nproc_per_node 8 train.py"


def test_crlf_scripts_read_like_lf_ones() -> None:
    script = parse_script("export A=1\r\ntorchrun \\\r\n  --nproc_per_node 8 t.py\r\n")
    assert [(a.name, a.value) for a in script.exports] == [("A", "1")]
    (command,) = script.commands
    assert command.text == "torchrun --nproc_per_node 8 t.py"
    first = command.args[0]
    assert (first.text, first.line, first.column) == ("--nproc_per_node", 3, 3)


def test_columns_are_characters_and_text_is_kept_exactly() -> None:
    script = parse_script('echo "naïve ß ü" 🚀x --flag=é\n# commentaire été\n')
    args = script.commands[0].args
    assert [(w.text, w.column) for w in args] == [
        ("naïve ß ü", 6),
        ("🚀x", 18),
        ("--flag=é", 21),
    ]
    assert script.comments[0].text == "# commentaire été"


def test_characters_that_crash_the_bash_scanner_are_harmless() -> None:
    # tree-sitter-bash feeds code points to ctype's isalpha(); past U+00FF that reads out of
    # bounds and segfaulted intermittently on this input. The reader parses an ASCII copy.
    for _ in range(300):
        parse_script("{\U0005327f\x89Ã3,")
    assert words("echo {\U0005327f,x}") == ["{\U0005327f,x}"]


def test_quoting_and_escapes() -> None:
    assert words("echo a\\ b 'c $X' \"d\\\"e\" \"f\\$g\" $'h' x\"y\"'z'") == [
        "a b", "c $X", 'd"e', "f$g", "h", "xyz",
    ]  # fmt: skip


def test_parameter_expansion_forms() -> None:
    text = (
        "A=1\nE=\n"
        'echo $A ${A} ${A:-9} ${U:-9} ${E:-9} "${E-9}" ${U-9} ${A:+yes} "${U:+yes}" ${#A} '
        '"${U:-"x y"}" ${1:-8} $U $@ $(date) ${A%%.*} ${E:+x} ${E}\n'
    )
    # Unquoted empty expansions vanish, as in bash.
    expected = ["1", "1", "1", "9", "9", "", "9", "yes", "", "1", "x y", "8", None, None, None]
    assert words(text) == [*expected, None]


def test_assigning_default_expansion_sets_the_variable() -> None:
    assert words(': "${PORT:=29500}"\necho $PORT') == ["29500"]


def test_unquoted_values_split_and_quoted_ones_do_not() -> None:
    text = 'ARGS="--a 1  --b"\necho $ARGS "$ARGS" x$ARGS\n'
    assert words(text) == ["--a", "1", "--b", "--a 1  --b", "x--a", "1", "--b"]
    assert words('E=""\necho $E "$E" end') == ["", "end"]


def test_arrays() -> None:
    text = (
        'A=(--x "1 2" $B)\nB=(p q)\nB+=(r)\necho "${A[@]}" ${B[@]} ${B[1]} ${#B[@]} "${B[*]}" $B\n'
    )
    assert words(text) == ["--x", "1 2", None, "p", "q", "r", "q", "3", "p q r", "p"]
    element = parse_script(text).commands[0].args[1]
    assert (element.text, element.line, element.column) == ("1 2", 1, 8)


def test_array_element_assignment_makes_the_array_unknown() -> None:
    assert variable("A=(x y)\nA[0]=z\n", "A") is None


def test_arithmetic() -> None:
    text = (
        "G=8\nN=2\n"
        "echo $((G*N)) $(($G * $N + 1)) $((G/3)) $((-7/2)) $((-7%3)) $((2**10)) "
        "$((0x10)) $((G/0)) $((U+1)) $((G>1?1:0)) $(( (G+N) * 2 ))\n"
    )
    assert words(text) == ["16", "17", "2", "-3", "-1", "1024", "16", None, None, None, "20"]


def test_assignments_in_branches_are_unknown_afterwards() -> None:
    text = (
        "A=1\nB=1\nC=1\nD=1\nE=1\nF=1\nG=1\n"
        'if [ -n "$X" ]; then A=2; fi\n'
        "case $Y in a) B=2 ;; esac\n"
        "f() { C=2; }\n"
        '[ -z "$Z" ] && D=2\n'
        "for x in 1 2; do E=2; done\n"
        "(F=2)\n"
        "echo x | G=2\n"
        "echo $A $B $C $D $E $F $G $x\n"
    )
    assert words(text) == [None, None, None, None, None, "1", "1", None]


def test_values_inside_a_branch_are_known_in_that_branch() -> None:
    text = "N=8\nif true; then\n  N=4\n  echo $N\nelse\n  echo $N\nfi\necho $N\n"
    echoes = [c for c in parse_script(text).commands if c.name.text == "echo"]
    assert [c.args[0].text for c in echoes] == ["4", "8", None]
    assert [c.conditional for c in echoes] == [True, True, False]


def test_readers_and_arithmetic_commands_make_variables_unknown() -> None:
    text = (
        "A=1\nB=1\nC=1\nD=1\nE=1\n"
        "read -r A\nmapfile -t B\nlet C=C+1\n((D++))\nprintf -v E '%s' x\n"
        "echo $A $B $C $D $E\n"
    )
    assert words(text) == [None, None, None, None, None]


def test_unset() -> None:
    assert words("A=1\nunset A\necho ${A:-gone}") == ["gone"]


def test_exports_and_declarations() -> None:
    text = (
        "export A=1 B='two words'\n"
        "declare -x C=3\ntypeset -rx D=4\nlocal E=5\nreadonly F=6\n"
        "G=7\nexport G\nG=8\nexport H\n"
        "if true; then export I=9; fi\n"
        "J=10 python x.py\n"
    )
    script = parse_script(text)
    exported = [(a.name, a.value, a.line, a.column, a.conditional) for a in script.exports]
    assert exported == [
        ("A", "1", 1, 8, False),
        ("B", "two words", 1, 12, False),
        ("C", "3", 2, 12, False),
        ("D", "4", 3, 13, False),
        ("G", "7", 7, 8, False),
        ("G", "8", 8, 1, False),
        ("I", "9", 10, 22, True),
    ]
    assert [(a.name, a.value) for a in script.commands[-1].env] == [("J", "10")]
    assert "J" not in script.variables


def test_heredocs_and_substitutions_hold_no_commands() -> None:
    text = (
        'cat > ds.json <<EOF\n{"train_batch_size": $BS}\ntorchrun x.py\nEOF\n'
        "OUT=$(python -c 'print(1)')\nfor f in $(ls); do :; done\n"
        "python train.py <(ls) 2> >(tee err)\n"
    )
    names = [c.name.text for c in parse_script(text).commands]
    assert names == ["cat", ":", "python"]


def test_commands_inside_functions_loops_and_lists_are_found() -> None:
    text = (
        "main() {\n  while true; do\n    srun python a.py || exit 1\n  done\n}\n"
        "time nohup torchrun b.py &\nA=1 B=2 env\n! deepspeed c.py | tee log\n"
    )
    names = [c.name.text for c in parse_script(text).commands]
    assert names == ["true", "srun", "exit", "time", "env", "deepspeed", "tee"]


def test_command_words_may_come_from_a_variable() -> None:
    text = 'LAUNCH="torchrun --nproc_per_node 4"\n$LAUNCH train.py\n'
    (command,) = parse_script(text).commands
    assert [w.text for w in command.words] == ["torchrun", "--nproc_per_node", "4", "train.py"]


def test_environment_and_prefixes() -> None:
    text = "echo ${SLURM_NNODES:-1} ${SLURM_PROCID:-0} ${OTHER:-3} $SLURM_NNODES"
    assert words(text) == ["1", "0", "3", None]
    script = parse_script(text, {"SLURM_NNODES": "4"}, ("SLURM_",))
    assert [w.text for w in script.commands[0].args] == ["4", None, "3", "4"]


def test_parse_inline_locates_commands_at_the_string() -> None:
    script = parse_script('CMD="torchrun --nproc_per_node 2 t.py"\nsrun bash -c "$CMD"\n')
    string = script.commands[0].args[2]
    (inner,) = parse_inline(string)
    assert isinstance(inner, Command)
    assert [w.text for w in inner.words] == ["torchrun", "--nproc_per_node", "2", "t.py"]
    assert {(w.line, w.column) for w in inner.words} == {(2, 14)}
    assert parse_inline(Word(None, "$X", 1, 1)) == []


def test_comments_know_whether_they_are_top_level() -> None:
    script = parse_script("#!/bin/bash\n#SBATCH -N 2\nf() {\n  # inside\n  :\n}\necho x # tail\n")
    assert [(c.text, c.line, c.column, c.top_level) for c in script.comments] == [
        ("#!/bin/bash", 1, 1, True),
        ("#SBATCH -N 2", 2, 1, True),
        ("# inside", 4, 3, False),
        ("# tail", 7, 8, True),
    ]


def test_syntax_errors_are_located_and_reading_goes_on() -> None:
    script = parse_script('python a.py\necho "unterminated\n')
    assert script.error == (2, 6)
    assert script.commands[0].name.text == "python"
    assert parse_script("echo ok\n").error is None


def test_limits() -> None:
    with pytest.raises(SourceError, match="nesting"):
        parse_script("if true; then " * 150 + "x" + "; fi" * 150)
    with pytest.raises(SourceError, match="larger"):
        parse_script("x" * (4 * 1024 * 1024 + 1))
    doubled = parse_script("A=x\n" + "A=$A$A\n" * 30 + "echo $A\n")
    assert doubled.commands[0].args[0].text is None  # capped, not 1 GiB
    arrays = parse_script("A=(x)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 20).variables["A"]
    assert arrays is None or (isinstance(arrays, tuple) and len(arrays) <= 10_000)


SKYPILOT = sorted((CORPUS / "skypilot").rglob("*.yaml")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not SKYPILOT, reason="../shared/corpus is not present")
def test_skypilot_run_blocks_of_the_corpus_read_without_errors() -> None:
    """Real ``setup:``/``run:`` blocks (read in place) parse cleanly and yield commands."""
    blocks = []
    for path in SKYPILOT:
        for document in yaml.safe_load_all(Path(path).read_text()):
            if isinstance(document, dict):
                blocks += [
                    document[k] for k in ("run", "setup") if isinstance(document.get(k), str)
                ]
    assert len(blocks) >= 10
    scripts: list[Script] = [parse_script(block) for block in blocks]
    assert sum(1 for s in scripts if s.error is None) >= len(scripts) * 0.9
    assert all(s.commands for s in scripts)


def test_an_if_or_case_the_script_decides_runs_only_its_arm() -> None:
    text = (
        'DTYPE="fp8"\nSCALE="800M"\nARGS=()\n'
        'if [[ "$DTYPE" == "fp8" ]]; then\n  ARGS+=("--fp8-format hybrid")\n'
        'elif [ "$DTYPE" = bf16 ]; then\n  ARGS+=(--bf16)\nfi\n'
        'case "${SCALE}" in\n  "800M") HIDDEN=1024 ;;\n  8B|9B) HIDDEN=4096 ;;\n'
        "  *) exit 1 ;;\nesac\n"
        "if [ ${#ARGS[@]} -gt 0 ]; then N=1; else N=0; fi\n"
        'if [ -z "$DTYPE" ]; then Z=1; fi\n'
        'case "${SCALE}" in 8B*) P=8 ;; [0-9]*M) P=m ;; esac\n'
        "torchrun train.py ${ARGS[@]} --hidden $HIDDEN $N ${Z:-none} $P\n"
    )
    assert words(text) == [
        "train.py",
        "--fp8-format",
        "hybrid",
        "--hidden",
        "1024",
        "1",
        "none",
        "m",
    ]
    launch = parse_script(text).commands[-1]
    assert not launch.conditional


def test_an_if_or_case_on_a_value_the_script_does_not_state_stays_undecided() -> None:
    text = (
        'N=8\nif [[ "$MODE" == fp8 ]]; then N=4; fi\n'
        "M=8\ncase $1 in a) M=4 ;; esac\n"
        'K=8\nif [ "$N" = 8 ] && true; then K=4; fi\n'  # a list, not one test: undecided
        "L=8\ncase x in x) L=4 ;& y) L=2 ;; esac\n"  # fall-through: undecided
        "echo $N $M $K $L\n"
    )
    assert words(text) == [None, None, None, None]


def test_an_array_appended_in_an_undecided_branch_keeps_its_items() -> None:
    text = (
        "LOGGING_ARGS=(\n    --log-interval 1 \\\n    --save-interval 10000 \\\n)\n"
        'if [ -n "${WANDB_API_KEY}" ]; then\n'
        "    LOGGING_ARGS+=(\n        --wandb-project x\n    )\nfi\n"
        'OTHER=(--a)\nif [ -n "$X" ]; then OTHER=(--b); fi\n'
        "torchrun pretrain_gpt.py ${LOGGING_ARGS[@]} --bf16 ${OTHER[@]}\n"
    )
    assert words(text) == [
        "pretrain_gpt.py", "--log-interval", "1", "--save-interval", "10000", None, "--bf16", None,
    ]  # fmt: skip


def test_a_partly_unknown_string_splits_into_known_and_unknown_words() -> None:
    text = (
        "DATA_PATH=$1\n"
        'options=" \\\n  --seq-length 4096 \\\n  --data-path ${DATA_PATH} \\\n  --bf16"\n'
        'QUOTED="$options"\n'
        'torchrun pretrain_hybrid.py ${options} "$options" $QUOTED\n'
    )
    script = parse_script(text)
    assert [w.text for w in script.commands[-1].args] == [
        "pretrain_hybrid.py", "--seq-length", "4096", "--data-path", None, "--bf16",
        None, "--seq-length", "4096", "--data-path", None, "--bf16",
    ]  # fmt: skip
    assert script.variables["options"] is None  # handed out only when fully known
    assert [a.value for a in script.assignments if a.name == "QUOTED"] == [None]
