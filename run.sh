#!/usr/bin/env bash
# The main job on the embedded default: create .venv if needed, then run the whole pipeline once, every paper's
# stages on the embedded data and the report (reports/index.html, reports/README.md), with `dvc repro` (one machine).
#   SCALE=auto|cpu|gpu ./run.sh    the default's scale (README "The default run"): `cpu` runs experiment `default`
#                                  (five methods, sized for 2 cores), `gpu` runs `default_gpu` (every method, sized
#                                  for one GPU); `auto` (the default) picks gpu when torch sees CUDA. On DVC a switch
#                                  is `dvc exp run -S experiment=...` (it rewrites params.yaml's selection).
#   FRONTEND=snakemake ./run.sh    the same graph through Snakemake (extra arguments go to snakemake,
#                                  e.g. --cores 4 or --config experiment=X); clusters: snakemake --profile slurm
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh
mapfile -t switch < <(python scripts/scale.py "${SCALE:-auto}" "${FRONTEND:-dvc}")
if [ "${FRONTEND:-dvc}" = snakemake ]; then
  if [ ${#switch[@]} -gt 0 ]; then set -- --config "${switch[@]}" "$@"; fi
  snakemake --cores "${CORES:-2}" "$@"
elif [ ${#switch[@]} -gt 0 ]; then
  dvc exp run "${switch[@]}" "$@"
else
  dvc repro "$@"
fi
echo "run.sh: done. Open reports/index.html (the results, then every table and figure); dvc metrics show"
