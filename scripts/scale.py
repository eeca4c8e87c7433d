"""The default run's scale: which embedded-data experiment ``./run.sh`` runs (README "The default run").

    python scripts/scale.py auto dvc         # one `dvc exp run` argument per line, nothing if no switch is needed
    python scripts/scale.py gpu snakemake    # experiment=default_gpu (for snakemake --config)

``cpu`` selects experiment ``default`` (five methods on a 2+2-layer model, sized for 2 CPU cores), ``gpu`` selects
``default_gpu`` (every method on a 3+3-layer 256-dimensional model, sized for one GPU), ``auto`` is ``gpu`` when
torch sees CUDA, else ``cpu``. Only a params.yaml whose ``experiment`` is one of these two is switched; any other
selection is left as it is. DVC runs the top-level job lists, so the switch sets them to the experiment's too.
"""

from __future__ import annotations

import argparse
import sys

SCALES = {"cpu": "default", "gpu": "default_gpu"}
JOB_LISTS = ("methods", "tasks", "task_methods", "xelm_experts", "xelm_targets")


def resolve(scale: str) -> str:
    """``cpu`` or ``gpu`` for ``scale`` (``auto``: ``gpu`` when CUDA is available)."""
    if scale != "auto":
        return scale
    import torch

    return "gpu" if torch.cuda.is_available() else "cpu"


def switch_args(params, target: str, frontend: str) -> list[str]:
    """Arguments that make the pipeline run experiment ``target`` (empty when params.yaml already does, or when it
    selects an experiment outside the default's scales)."""
    if params.experiment not in SCALES.values() or params.experiment == target:
        return []
    if frontend == "snakemake":
        return [f"experiment={target}"]
    lists = [f"{k}=[{','.join(params.jobs_of(target, k))}]" for k in JOB_LISTS]
    return [arg for kv in (f"experiment={target}", *lists) for arg in ("-S", kv)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scale", choices=["auto", *SCALES])
    ap.add_argument("frontend", choices=["dvc", "snakemake"])
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args(argv)
    from lsnmt.config import Params

    params = Params.load(args.params)
    target = SCALES[resolve(args.scale)]
    print(f"scale: {target} ({'selected' if params.experiment == target else 'switching from ' + params.experiment})"
          if params.experiment in SCALES.values() else f"scale: experiment {params.experiment} left as selected",
          file=sys.stderr)
    for arg in switch_args(params, target, args.frontend):
        print(arg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
