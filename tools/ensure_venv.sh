# Sourced by run_tests.sh and run_experiments.sh: (re)creates .venv when it is missing or when
# requirements.txt changed since it was built (its hash is kept in .venv/requirements.sha256),
# then activates it.
set -euo pipefail
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_want="$(sha256sum "$_root/requirements.txt" | cut -d' ' -f1)"
_have="$(cat "$_root/.venv/requirements.sha256" 2>/dev/null || true)"
if [ ! -x "$_root/.venv/bin/python" ] || [ "$_want" != "$_have" ]; then
  echo "[lisa_tf] creating .venv from requirements.txt (first run or requirements changed)" >&2
  python3 -m venv "$_root/.venv"
  "$_root/.venv/bin/python" -m pip install --quiet --upgrade pip >&2
  "$_root/.venv/bin/python" -m pip install --quiet -r "$_root/requirements.txt" >&2
  echo "$_want" > "$_root/.venv/requirements.sha256"
fi
# shellcheck disable=SC1091
source "$_root/.venv/bin/activate"
export PYTHONPATH="$_root${PYTHONPATH:+:$PYTHONPATH}"
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
