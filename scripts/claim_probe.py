"""Learning curve of one system of the claim (``experiments.<exp>.claim``) on a variant of its task: BLEU and exact
match on the claim's test sentences after each budget of ``--steps`` (how the claim's task, base size and budget
were chosen; docs/claim.md).

    python scripts/claim_probe.py --system naive --steps 600 1200 1800 --set lr=0.03 --work work/probe/naive
    python scripts/claim_probe.py --system lms --task scramble=fr,tr --model embed_dim=24 --seed 2 --work ...
    python scripts/claim_probe.py --system fd --steps 2 3 --task "sentences={train: 60, valid: 4, test: 8}" \
        --work /tmp/probe   # tiny (the test)

``--system`` is ``naive``, a key of ``claim.dense`` or of ``claim.methods``; ``--task`` overrides the claim's task
keys (``languages=en,de,fr``, ``concepts=64``, ``reverse=`` for none), ``--model`` and ``--set`` its model and
training keys. Trains with the claim stage's own code (``lsnmt.claim.measure.train_job``), resuming between
budgets (``max_steps`` does not enter the trainer's fingerprint); prints one JSON line per budget with the CPU
seconds of this process (one thread).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import torch
import yaml

from lsnmt.claim import measure, stats, task
from lsnmt.claim.config import ClaimConfig
from lsnmt.experiment.params import Params
from lsnmt.typed import build, to_dict

LISTS = ("languages", "reverse", "scramble")


def _pairs(items: list[str], lists: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, value = item.split("=", 1)
        out[key] = [v for v in value.split(",") if v] if key in lists else yaml.safe_load(value)
    return out


def claim_config(args: argparse.Namespace) -> ClaimConfig:
    cfg = Params.load(args.params).get(args.experiment).claim
    if cfg is None:
        raise SystemExit(f"experiments.{args.experiment} has no claim section")
    raw = to_dict(cfg)
    raw |= _pairs(args.task, LISTS)
    raw["model"] |= _pairs(args.model)
    raw["train"] |= _pairs(args.set)
    # rebuilt from YAML, a mapping becomes read-only and the trainer's fingerprint (dataclasses.asdict) cannot
    # copy it: leave the per-kind batching at its default unless it is set
    if "batching_by_kind" not in dict(_pairs(args.set)):
        raw["train"].pop("batching_by_kind")
    return build(ClaimConfig, raw, "claim")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--params", type=Path, default=Path("params.yaml"))
    p.add_argument("--experiment", default="default")
    p.add_argument("--system", default="naive")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--steps", type=int, nargs="+", required=True)
    p.add_argument("--task", nargs="*", default=[], help="claim task keys, key=value")
    p.add_argument("--model", nargs="*", default=[], help="claim.model keys, key=value")
    p.add_argument("--set", nargs="*", default=[], help="claim.train keys, key=value")
    p.add_argument("--work", type=Path, required=True)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    cfg = claim_config(args)
    method = args.system if args.system in cfg.methods else "naive"
    bin_dir = args.work / "bin"
    if not (bin_dir / "meta.json").is_file():
        task.write_data(cfg, bin_dir)
    for steps in args.steps:
        budget = dataclasses.replace(cfg.train, max_steps=steps, validate_every=steps, save_every=steps)
        exp = task.spec(args.experiment, dataclasses.replace(cfg, train=budget),
                        task.Job(args.system, method, args.seed))
        start = time.process_time()
        model = measure.train_job(exp, method, bin_dir, args.work / "job")
        refs = measure.references(exp, bin_dir)
        dirs = list(refs)
        for name, hyps in measure.decode(exp, method, model, bin_dir).items():
            s = stats.score(stats.pool({1: hyps}, [1], dirs), stats.pool({1: refs}, [1], dirs))
            print(json.dumps({"system": args.system if method == "naive" else name, "seed": args.seed,
                              "steps": steps, "bleu": round(s["bleu"], 2), "exact": round(s["exact"], 1),
                              "cpu_seconds": round(time.process_time() - start, 1)}), flush=True)


if __name__ == "__main__":
    main()
