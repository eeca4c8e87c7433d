"""The default run's scale: which embedded-data experiment ``./run.sh`` runs (README "The default run").

    python scripts/scale.py auto dvc         # one `dvc exp run` argument per line, nothing if no switch is needed
    python scripts/scale.py gpu snakemake    # experiment=default_gpu (for snakemake --config)
    python scripts/scale.py auto --resolve   # cpu or gpu
    python scripts/scale.py gpu --slots      # GPU jobs that may run at once: visible GPUs x GPU_SLOTS (default 4)

``cpu`` selects experiment ``default`` (five methods on a 2+2-layer model, sized for 2 CPU cores), ``gpu`` selects
``default_gpu`` (every method on a 3+3-layer 256-dimensional model, sized for one GPU), ``auto`` is ``gpu`` when
torch sees CUDA, else ``cpu``. Only a params.yaml whose ``experiment`` is one of these two is switched; any other
selection is left as it is. DVC runs the top-level job lists, so the switch sets them to the experiment's too.
"""

from __future__ import annotations

import argparse
import sys

from lsnmt.experiment.params import JOB_LISTS, Params

SCALES = {"cpu": "default", "gpu": "default_gpu"}
GPU_SLOTS = 4
"""Trainings (or other GPU jobs) that share one GPU at once in a local GPU run (``GPU_SLOTS`` in the environment
overrides it): ``default_gpu``'s models are small (256 dimensions), so one training leaves most of a GPU idle.
Snakemake honours it as ``--resources gpu=<GPUs x slots>`` (every GPU rule asks for ``gpu``); DVC runs one stage at
a time whatever it is told (a DVC limitation), which is why ``SCALE=gpu ./run.sh`` runs Snakemake."""


def resolve(scale: str) -> str:
    """``cpu`` or ``gpu`` for ``scale`` (``auto``: ``gpu`` when CUDA is available)."""
    if scale != "auto":
        return scale
    import torch

    return "gpu" if torch.cuda.is_available() else "cpu"


def switch_args(params: Params, target: str, frontend: str) -> list[str]:
    """Arguments that make the pipeline run experiment ``target`` (empty when params.yaml already does, or when it
    selects an experiment outside the default's scales)."""
    if params.experiment not in SCALES.values() or params.experiment == target:
        return []
    if frontend == "snakemake":
        return [f"experiment={target}"]
    lists = [f"{k}=[{','.join(params.jobs_of(target, k))}]" for k in JOB_LISTS]
    return [arg for kv in (f"experiment={target}", *lists) for arg in ("-S", kv)]


def gpu_slots(env: dict[str, str] | None = None) -> int:
    """Snakemake's ``gpu`` resource for a local run: visible GPUs x slots per GPU (at least 1)."""
    import os

    import torch

    per_gpu = int((env if env is not None else os.environ).get("GPU_SLOTS", GPU_SLOTS))
    if per_gpu < 1:
        raise SystemExit(f"GPU_SLOTS must be >= 1, got {per_gpu}")
    return max(1, torch.cuda.device_count()) * per_gpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scale", choices=["auto", *SCALES])
    ap.add_argument("frontend", nargs="?", choices=["dvc", "snakemake"])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--resolve", action="store_true", help="print cpu or gpu")
    ap.add_argument("--slots", action="store_true", help="print the local run's gpu resource")
    args = ap.parse_args(argv)
    if args.resolve or args.slots:
        print(resolve(args.scale) if args.resolve else gpu_slots())
        return 0
    if args.frontend is None:
        ap.error("the front end (dvc or snakemake) is required")
    params = Params.load(args.params)
    target = SCALES[resolve(args.scale)]
    switch = switch_args(params, target, args.frontend)
    print(f"scale: running experiment {target if switch else params.experiment}", file=sys.stderr)
    for arg in switch:
        print(arg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
