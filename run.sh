#!/usr/bin/env bash
# The main job on the embedded default: create .venv if needed, then run the whole pipeline once, every method
# of every paper and the report (reports/README.md), with `dvc repro` (one machine).
#   FRONTEND=snakemake ./run.sh    the same graph through Snakemake (extra arguments go to snakemake,
#                                  e.g. --cores 4 or --config experiment=X); clusters: snakemake --profile slurm
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh
if [ "${FRONTEND:-dvc}" = snakemake ]; then
  snakemake --cores "${CORES:-2}" "$@"
else
  dvc repro "$@"
fi
