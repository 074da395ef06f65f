#!/usr/bin/env bash
# Creates .venv from requirements.txt if missing or stale, then runs the whole test suite.
# Extra arguments go to pytest (e.g. ./run_tests.sh tests/data_pipeline -x). Tests run in two worker
# processes (pytest-xdist; LISA_TF_TEST_WORKERS=N for another number, 0 to run in this process), each
# test file whole on one worker (--dist loadfile), so a module's fixtures are built once.
set -euo pipefail
cd "$(dirname "$0")"
source tools/ensure_venv.sh
exec python -m pytest -n "${LISA_TF_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "${@:-tests}"
