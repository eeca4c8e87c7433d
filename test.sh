#!/usr/bin/env bash
# The test suite (creates .venv if needed) on TEST_WORKERS pytest-xdist workers (default auto: one per core; 0 runs
# in this process). Extra arguments go to pytest, e.g. ./test.sh --slow -x
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh
python -m pytest -n "${TEST_WORKERS:-auto}" --dist worksteal "$@"  # an idle worker takes queued tests from a busy one
