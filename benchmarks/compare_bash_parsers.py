"""Why ``trainlint.sources.shell`` is built on tree-sitter-bash rather than bashlex.

Runs both parsers over the launch-script fixtures and a set of constructs that real launch
scripts use, and counts what each parses: bashlex "handles" an input when ``bashlex.parse``
returns without an exception; tree-sitter when the tree has no ERROR or MISSING node.

    pip install bashlex   # only for this comparison; not a trainlint dependency
    PYTHONPATH=. python benchmarks/compare_bash_parsers.py [-v]

Nothing here is executed as shell.
"""

from __future__ import annotations

import sys
from pathlib import Path

import tree_sitter
import tree_sitter_bash

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "sources" / "fixtures" / "scripts"

SNIPPETS: dict[str, str] = {
    "array assignment": "ARGS=(--nproc_per_node $GPUS --nnodes 2)\n",
    "array expansion": 'torchrun "${ARGS[@]}" train.py ${MORE[*]}\n',
    "array append": "ARGS+=(--bf16)\n",
    "declare array": "declare -a LIST=(a b c)\ndeclare -A MAP=([k]=v)\n",
    "heredoc": 'cat > ds.json <<EOF\n{"train_batch_size": $BS}\nEOF\n',
    "quoted heredoc": "cat <<'EOF' > run.sh\necho $NOT_EXPANDED\nEOF\n",
    "indented heredoc": "if true; then\n\tcat <<-EOF\n\tx\n\tEOF\nfi\n",
    "herestring": 'read -r A B <<< "$LINE"\n',
    "[[ test ]]": 'if [[ -n "$X" && $N -gt 1 ]]; then echo y; fi\n',
    "[[ regex ]]": "if [[ $HOST =~ ^gpu[0-9]+$ ]]; then echo y; fi\n",
    "function ()": "launch() {\n  torchrun --nproc_per_node 8 train.py\n}\nlaunch\n",
    "function keyword": "function launch {\n  deepspeed train.py\n}\n",
    "case": 'case "$SIZE" in\n  7b|8b) TP=1 ;;\n  70b) TP=8 ;;\n  *) TP=2 ;;\nesac\n',
    "case fallthrough": "case $X in\n  a) echo a ;&\n  b) echo b ;;&\n  *) echo c ;;\nesac\n",
    "arithmetic expansion": "WORLD_SIZE=$(($GPUS_PER_NODE*$NUM_NODES))\n",
    "arithmetic command": "((STEPS = STEPS * 2))\n",
    "c-style for": "for ((i = 0; i < 4; i++)); do echo $i; done\n",
    "process substitution": "diff <(sort a) <(sort b)\npython t.py 2> >(tee err.log)\n",
    "command substitution": "MASTER=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\n",
    "nested substitution": 'DIR="$(dirname "$(readlink -f "$0")")"\n',
    "backticks": "HOST=`hostname`\n",
    "parameter defaults": "GPUS=${GPUS:-8}\nPORT=${PORT:=29500}\nX=${Y:+set}\n",
    "parameter patterns": "BASE=${CFG##*/}\nNAME=${BASE%.yaml}\nUP=${NAME^^}\n",
    "ansi-c string": "IFS=$'\\n\\t'\n",
    "brace expansion": "mkdir -p logs/{train,eval}\n",
    "redirections": "python t.py &> log.txt\npython t.py |& tee log\n",
    "line continuations": "torchrun \\\n  --nproc_per_node 8 \\\n  train.py\n",
    "env prefix": "NCCL_DEBUG=INFO CUDA_VISIBLE_DEVICES=0,1 torchrun t.py\n",
    "subshell and group": "(cd src && python t.py)\n{ echo a; echo b; } > out\n",
    "select": "select opt in a b; do echo $opt; break; done\n",
    "coproc": "coproc WORKER { python serve.py; }\n",
    "trap": "trap 'kill $PID' EXIT INT TERM\n",
    "local -x": "f() { local -x OMP_NUM_THREADS=4; python t.py; }\n",
    "negation and lists": "! grep -q x f && echo a || echo b\n",
    "background and wait": "python a.py &\nPID=$!\nwait $PID\n",
    "extglob": "shopt -s extglob\nif [[ $x == @(a|b) ]]; then echo y; fi\n",
    "indirect prefix": "echo ${!SLURM_@}\n",
    "indexed array literal": "A=([0]=a [2]=c)\n",
    "old arithmetic": "echo $[1+2]\n",
    "pattern substitution": "echo ${x/#pat/rep} ${x//a/b}\n",
    "heredoc in pipeline": "cat <<EOF | python -\nprint(1)\nEOF\n",
    "heredoc with substitution": "cat <<EOF\n$(date) ${X:-y}\nEOF\n",
    "time -p": "time -p python t.py\n",
    "nested quotes in subst": 'X="$(echo "a \\"b\\" c")"\n',
    "case in subshell": "X=$(case $Y in a) echo 1;; esac)\n",
    "comment after continuation": "python t.py \\\n  --a 1 # c\n",
    "arithmetic for with comma": "for ((i=0, j=1; i<3; i++)); do :; done\n",
    "here-string with var": 'python - <<< "$CODE"\n',
    "let": 'let "x = 1 + 2"\n',
    "test -v": "[[ -v FOO ]] && echo set\n",
    "until": "until false; do break; done\n",
    "two heredocs on one line": "paste <<A <<B\n1\nA\n2\nB\n",
    "assoc array": "declare -A M\nM[key]=value\necho ${M[key]}\n",
    "mapfile": "mapfile -t LINES < <(ls)\n",
}


def _tree_sitter() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def tree_sitter_handles(parser: tree_sitter.Parser, text: str) -> bool:
    return not parser.parse(text.encode("utf-8")).root_node.has_error


def bashlex_handles(text: str) -> tuple[bool, str]:
    import bashlex

    try:
        bashlex.parse(text)
    except Exception as exc:  # bashlex raises several unrelated exception types
        return False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:70]}"
    return True, ""


def main(verbose: bool) -> int:
    parser = _tree_sitter()
    inputs = {f"fixture {p.name}": p.read_text() for p in sorted(FIXTURES.iterdir())}
    inputs.update({f"snippet {name}": text for name, text in SNIPPETS.items()})
    counts = {"tree-sitter-bash": 0, "bashlex": 0}
    for label, text in inputs.items():
        ts_ok = tree_sitter_handles(parser, text)
        bl_ok, why = bashlex_handles(text)
        counts["tree-sitter-bash"] += ts_ok
        counts["bashlex"] += bl_ok
        if verbose or not (ts_ok and bl_ok):
            print(f"{label:45} tree-sitter {'ok' if ts_ok else 'ERROR':5}  bashlex {why or 'ok'}")
    fixtures = sum(1 for label in inputs if label.startswith("fixture"))
    print(f"\n{len(inputs)} inputs ({fixtures} fixture scripts, {len(SNIPPETS)} snippets)")
    for name, count in counts.items():
        print(f"{name:17} parses {count}/{len(inputs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main("-v" in sys.argv[1:]))
