#!/usr/bin/env bash
# Creates .venv from requirements.txt if missing or stale, then runs the whole test suite.
# Extra arguments go to pytest (e.g. ./run_tests.sh tests/data_pipeline -x).
set -euo pipefail
cd "$(dirname "$0")"
source tools/ensure_venv.sh
exec python -m pytest "${@:-tests}"
