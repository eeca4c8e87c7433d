#!/usr/bin/env bash
# Static checks (.ci/run runs them): ruff's lint on the whole tree, ruff's format on the files listed in
# .ci/formatted.txt, and mypy on the library (lsnmt/, models/; settings and the shrinking ignore list in pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
ruff check .
grep -v '^#' .ci/formatted.txt | xargs ruff format --check
mypy
