#!/usr/bin/env bash
# The papers' experiments end to end:
#   ./run_experiments.sh open [--quick]                       shipped PropBank-EWT data, no licence needed
#   ./run_experiments.sh conll05 --data-dir DIR [--quick]     your conll05st-release directory
#   ./run_experiments.sh conll12 --data-dir DIR               OntoNotes *.gold_conll, standard split
# Options: --parse-dir DIR (external CoNLL-U parses), --all (DeepAtt RNN/CNN too), --models M..., --out DIR,
#          --contextual (each model also with MiniLM word vectors, frozen and fine-tuned: the "+ MiniLM" and
#          "+ MiniLM fine-tuned" rows).
# Creates .venv from requirements.txt when it is missing or stale. Re-running resumes.
set -euo pipefail
cd "$(dirname "$0")"
source tools/ensure_venv.sh
exec python -W ignore -m lisa_tf experiments "$@"
