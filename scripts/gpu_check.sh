#!/usr/bin/env bash
# A GPU check for a new node (scripts/gpu_check.py): environment, the device tests, the trainer's throughput and a
# short default_gpu run, then a table (gpu_check/gpu_check.md). Needs a CUDA torch and the project's Python
# dependencies only (no DVC, no Snakemake); about 8 minutes on one H100. Without a GPU it says so and runs nothing
# that needs one. Uses the active Python (PYTHON=... to choose one), so that a cluster's CUDA torch is used as is.
#   scripts/gpu_check.sh [--out DIR] [--skip tests,bench,run] [--steps 300]
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/gpu_check.py "$@"
