#!/usr/bin/env bash
# The main job on the embedded default: create .venv if needed, then run the whole pipeline once, every paper's
# stages on the embedded data and the report (reports/index.html, reports/README.md).
#   SCALE=auto|cpu|gpu ./run.sh    the default's scale (README "The default run"): `cpu` runs experiment `default`
#                                  (five methods, sized for 2 cores) with `dvc repro`; `gpu` runs `default_gpu`
#                                  (every method, sized for one GPU) with Snakemake, GPU_SLOTS (default 4) jobs
#                                  sharing each GPU (DVC runs one stage at a time); `auto` (the default) picks gpu
#                                  when torch sees CUDA. On DVC a switch is `dvc exp run -S experiment=...`.
#   FRONTEND=dvc|snakemake ./run.sh  the front end (default: dvc on a CPU, snakemake on a GPU); extra arguments go
#                                  to it (e.g. --cores 4 or --config experiment=X); clusters: snakemake --profile slurm
# Each stage prints its own start, progress and end lines, so the front ends' per-stage blocks are held back: DVC
# runs through lsnmt.graph.brief (its warnings and errors kept; `dvc repro` by hand prints everything), Snakemake
# with `--quiet rules` (its rule blocks list every code file a rule depends on; its progress and errors stay).
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh
scale=$(python scripts/scale.py "${SCALE:-auto}" --resolve)
if [ "$scale" = gpu ]; then frontend=${FRONTEND:-snakemake}; else frontend=${FRONTEND:-dvc}; fi
mapfile -t switch < <(python scripts/scale.py "$scale" "$frontend")
if [ "$frontend" = snakemake ]; then
  if [ ${#switch[@]} -gt 0 ]; then set -- --config "${switch[@]}" "$@"; fi
  if [ "$scale" = gpu ]; then
    set -- --resources "gpu=$(python scripts/scale.py gpu --slots)" "$@"
    cores=$(nproc)
  fi
  snakemake --cores "${CORES:-${cores:-2}}" --quiet rules "$@"
elif [ ${#switch[@]} -gt 0 ]; then
  python -m lsnmt.graph.brief exp run "${switch[@]}" "$@"
else
  python -m lsnmt.graph.brief repro "$@"
fi
echo "run.sh: done. Open reports/index.html (the results, then every table and figure); dvc metrics show"
