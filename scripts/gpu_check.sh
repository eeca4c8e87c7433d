#!/usr/bin/env bash
# The GPU check of a new node (scripts/gpu_check.py, lsnmt/gpucheck/): the device tests, the data stages in the
# pipeline's order, the benchmarks, naive alone and four trainings together in time-boxes, translation and
# sacreBLEU, each step under a printed budget, within 8 minutes on one H100 / H200; then one table of figures and
# targets (DIR/gpu_check.md). --cpu runs every step at tiny size on the CPU (a default-tier test does). Needs the
# project's Python dependencies only (no DVC, no Snakemake); uses the active Python (PYTHON=... to choose one).
#   scripts/gpu_check.sh [--cpu] [--out DIR] [--work DIR] [--minutes 8] [--compile on|off|as-set] [--skip tests,bench,train]
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/gpu_check.py "$@"
