# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Methods that route rows by language against the plain model, in one run (LSL ran 20x slower than naive on an
H200 and not on a CPU: ``models/ls/grouped.py``).

    .venv/bin/python benchmarks/routing_cost.py [--experiment default_gpu] [--device cpu] [--precision fp32]
        [--updates 3] [--rounds 3] [--shape-updates 10] [--threads 2] [--max-tokens 1024] [--tiny]

For naive and each method that routes rows by language (the experiment's LSL, LS-FFN, FD, Switch, CLSR and CLSR*
entries, plus LS-ATTENTION, LSL-NAS's search layer and a per-target decoder), on the experiment's model and
mixed-direction batches (``lsnmt.train.ops.mixed_batch``, the directions drawn anew for every update), one eager
trainer update (``lsnmt.train.update``: the kind's criterion, fused AdamW):

* ``ms/update``: the best of ``--rounds`` rounds of ``--updates`` updates after a warm-up, the methods alternating
  round by round (a change of machine load hits all of them); ``x naive``: its ratio to naive's;
* ``ops``: ATen operations per update (``models.opcount``: total / computing), and beyond naive's (per pass: FD
  runs two);
* ``shapes``: distinct (operation, output shape) pairs over ``--shape-updates`` updates of one batch shape (naive's:
  those of one update), and ``copies``: host-to-device copies per update (``models.lang.host_copy``).

``--tiny``: width 32 (the operation counts do not depend on it). On a GPU each round ends with a synchronize.
``--layout tiles`` runs a GPU's layout of the grouped computations on a CPU (its operation counts and shapes are
the GPU's; a CPU's own layout, segments of exact sizes, has data-dependent shapes on purpose: ``models/tiles.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import models.lang
import models.tiles
from lsnmt.data.corpus import Sample
from lsnmt.experiment.params import Experiment, Params
from lsnmt.methods import resolve
from lsnmt.methods.schema import Method, MethodTable
from lsnmt.train.dist import Dist
from lsnmt.train.loss import default_criterion
from lsnmt.train.ops import PAD, mixed_batch
from lsnmt.train.optim import build_optimizer
from lsnmt.train.update import Updater, update, updater
from lsnmt.typed import build
from models.build import build_transformer
from models.config.kinds import passes
from models.lang import LangContext
from models.ls import criterion
from models.ls.lsl import LSLSearchConfig, search_factories
from models.opcount import count_ops

EXTRA: Mapping[str, Method] = build(MethodTable, {
    "lsl_attention": {"kind": "lsl", "src": [1], "tgt": [2], "components": "attention"},
    "per_target": {"kind": "lsl", "decoder": "per-target"},
}, "EXTRA")
"""Routed methods that ``default_gpu`` does not list: LS-ATTENTION (LSL Table 4) and a per-target decoder."""
ROUTED = ("lsl", "fd", "switch", "clsr")


@dataclasses.dataclass
class Row:
    name: str
    ms: float
    ops: int
    kernels: int
    shapes: int
    copies: float
    passes: int


def methods(exp: Experiment) -> list[str]:
    """naive, the experiment's routed methods (a searched layout and dense pre-training left out: the same models),
    the extra ones and the search layer."""
    routed = []
    for name in exp.method_cfg:
        kind, cfg = resolve(exp.method_cfg, name)
        if kind in ROUTED and getattr(cfg, "architecture", None) is None and not getattr(cfg, "dense_steps", 0):
            routed.append(name)
    return ["naive", *routed, "search"]


def trainee(exp: Experiment, name: str, device: torch.device, precision: str) -> tuple[Updater, Any]:
    torch.manual_seed(0)
    kind, cfg, factories = None, None, None
    if name == "search":
        factories = search_factories(LSLSearchConfig())
    else:
        kind, cfg = resolve(exp.method_cfg, name)
    model = build_transformer(exp.model, vocab_size=8000, num_languages=len(exp.data.languages), padding_idx=PAD,
                              method=kind, method_cfg=cfg, factories=factories).to(device)
    opt = build_optimizer(model.parameters(), exp.train, fused=True)
    up = updater(model, opt, Dist(0, 1, device, False), precision=precision, clip_norm=exp.train.clip_norm)
    return up, kind


def batches(exp: Experiment, n: int, tokens: int, device: torch.device) -> list[Sample]:
    """``n`` batches of one shape, each with the directions of the experiment's pairs drawn anew."""
    base = mixed_batch(exp, 8000, max_tokens=tokens, length=12)
    langs = list(exp.data.languages)
    pairs = np.array([(langs.index(s), langs.index(t)) for s, t in exp.data.train_pairs])
    out = []
    for seed in range(n):
        which = pairs[np.random.default_rng(seed).integers(0, len(pairs), len(base.langs))]
        sample = Sample(base.src_tokens, base.prev_output_tokens, base.target,
                        LangContext.from_ids(which[:, 0], which[:, 1]), base.ntokens)
        out.append(sample.to(device))
    return out


def _micro(up: Updater, kind: str | None, sample: Sample, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    on = Sample(sample.src_tokens, sample.prev_output_tokens, sample.target, sample.langs.with_(progress=0.5),
                sample.ntokens)
    loss, nll, _ = (criterion(kind) or default_criterion)(up.net, on, eps, PAD)
    aux = up.model.aux_loss()  # type: ignore[operator]
    total = loss if aux is None else loss + aux.float() * sample.ntokens
    return total / sample.ntokens, torch.stack([loss.detach(), nll.detach()])


def step(up: Updater, kind: str | None, sample: Sample, eps: float, i: int) -> None:
    update(up, [functools.partial(_micro, up, kind, sample, eps)], 1e-4, i)


class _Shapes(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[str, tuple[int, ...]]] = set()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.seen.add((func.overloadpacket.__name__, tuple(t.shape)))
        return out


def profile(up: Updater, kind: str | None, data: list[Sample], eps: float) -> tuple[int, int, int, float]:
    """Operations of one update (after one: the optimizer's state), distinct shapes and host copies over ``data``."""
    step(up, kind, data[0], eps, 0)
    with count_ops() as ops:
        step(up, kind, data[1 % len(data)], eps, 1)
    copies = 0
    real = models.lang.host_copy

    def counted(t: torch.Tensor, device: torch.device) -> torch.Tensor:
        nonlocal copies
        copies += 1
        return real(t, device)

    models.lang.host_copy = counted
    try:
        with _Shapes() as shapes:
            for i, sample in enumerate(data):
                step(up, kind, sample, eps, i)
    finally:
        models.lang.host_copy = real
    return ops.total, ops.kernels, len(shapes.seen), copies / len(data)


def main(argv: list[str] | None = None) -> list[Row]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--experiment", default="default_gpu")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    ap.add_argument("--updates", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shape-updates", type=int, default=10)
    ap.add_argument("--max-tokens", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--tiny", action="store_true", help="width 32 (the operation counts do not depend on it)")
    ap.add_argument("--only", nargs="*", help="these methods (and naive)")
    ap.add_argument("--layout", choices=["segments", "tiles"], default="segments",
                    help="a CPU's layout of the grouped computations (models/tiles.py): its own, or a GPU's")
    args = ap.parse_args(argv)
    models.tiles.CPU_LAYOUT = args.layout
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    exp = Params.load(str(ROOT / "params.yaml")).get(args.experiment)
    model = dataclasses.replace(exp.model, embed_dim=32, ffn_dim=64) if args.tiny else exp.model
    exp = dataclasses.replace(exp, model=model, method_cfg={**exp.method_cfg, **EXTRA})
    names = methods(exp) if not args.only else ["naive", *(n for n in args.only if n != "naive")]
    eps = exp.train.label_smoothing
    timing = batches(exp, max(args.updates, 2), args.max_tokens, device)
    shaping = batches(exp, max(args.shape_updates, 2), args.max_tokens, device)
    runs, rows = {n: trainee(exp, n, device, args.precision) for n in names}, {}
    for name, (up, kind) in runs.items():
        total, kernels, shapes, copies = profile(up, kind, shaping, eps)
        rows[name] = Row(name, float("inf"), total, kernels, shapes, copies, passes(kind))
    for _ in range(args.rounds):
        for name, (up, kind) in runs.items():
            start = time.perf_counter()
            for i, sample in enumerate(timing[: args.updates]):
                step(up, kind, sample, eps, i)
            if device.type == "cuda":
                torch.cuda.synchronize()
            rows[name].ms = min(rows[name].ms, 1e3 * (time.perf_counter() - start) / args.updates)
    _print(rows, args, exp)
    return list(rows.values())


def _print(rows: dict[str, Row], args: argparse.Namespace, exp: Experiment) -> None:
    base = rows["naive"]
    m = exp.model
    print(f"{args.experiment}: {m.embed_dim}-dim {m.encoder_layers}+{m.decoder_layers} layers, "
          f"{len(exp.data.languages)} languages, mixed batches of {args.max_tokens} tokens; {args.device} "
          f"{args.precision}, {torch.get_num_threads()} thread(s), best of {args.rounds} x {args.updates} updates"
          + (f"; a CPU's layout: {args.layout}" if args.device == "cpu" else ""))
    print(f"{'method':14s} {'ms/update':>9s} {'x naive':>7s} {'ops':>6s} {'computing':>9s} {'beyond naive':>12s} "
          f"{'shapes':>6s} {'copies':>6s}")
    for r in rows.values():
        beyond = r.ops - r.passes * base.ops
        print(f"{r.name:14s} {r.ms:9.1f} {r.ms / base.ms:7.2f} {r.ops:6d} {r.kernels:9d} {beyond:12d} "
              f"{r.shapes:6d} {r.copies:6.1f}")


if __name__ == "__main__":
    main()
