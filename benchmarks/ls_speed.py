# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Training-step time of the LMS-FD paper's methods (and CLM at its paper's k) relative to naive, and Share-route
decoding speed (not a test).

    .venv/bin/python benchmarks/ls_speed.py [--steps 3] [--rounds 5] [--tokens 1024] [--clock wall] [--device cpu]

All models are ``transformer_small`` (512/1024, 4 heads, 6+6, the IWSLT'14 model)
with 9 languages and an 8K vocabulary, built with the IWSLT'14 method settings of
params.yaml (LMS d=32, Switch 16 experts every two layers, CLSR p=0.3), and CLM with
the k of its paper's Table 9 (sCLM k=194, mCLM k=134; in every sublayer, P per layer). A training
step is the method's criterion (two passes for FD and LMS+FD), backward and an
AdamW step on one one-direction batch of about ``--tokens`` target tokens; rounds
alternate between the methods so that a change of machine load hits all of them.
Reported per method: the median over rounds of the round's ``t_method / t_naive`` and its range.
Decoding: greedy incremental decoding of a fixed number of steps (no early stop:
random weights) through the inference route, target tokens per second.
``--clock cpu`` times the process's CPU time instead of wall-clock time (steadier on a shared machine).
CLM at its paper's k is costly by its maths (Eq. 2: ``k`` maps of ``d x d`` per token in each of 30 modules): on
2 CPU threads about 50x (sCLM, k=194) and 35x (mCLM, k=134) the naive step, so the default rounds take about half
an hour; ``--only`` picks methods. CLM's memory stays bounded by recomputing its products in the backward
(``recompute``, ``models/config/clm.py``): 7 GB peak for both, where keeping them ran out of 24 GB.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt.config import ModelConfig
from lsnmt.train.loss import default_criterion
from models.build import build_transformer
from models.lang import LangContext
from models.ls import criterion
from models.ls.clm import CLMConfig
from models.ls.clsr import CLSRConfig
from models.ls.fd import FDConfig
from models.ls.lms import LMSConfig, LMSFDConfig
from models.ls.switch import SwitchConfig

VOCAB, PAD, EOS, LANGS = 8000, 1, 2, 9
METHODS: dict[str, tuple[str | None, Any]] = {
    "naive": (None, None),
    "lms": ("lms", LMSConfig(rank=32)),
    "lms_fd": ("lms_fd", LMSFDConfig(rank=32)),
    "fd": ("fd", FDConfig()),
    "switch": ("switch", SwitchConfig(experts=16, every=2)),
    "clsr": ("clsr", CLSRConfig(sublayers=("self", "ffn"))),
    "sclm-k194": ("clm", CLMConfig(features=194)),
    "mclm-k134": ("clm", CLMConfig(features=134, encoder="mclm", decoder="mclm")),
}
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def batch(tokens: int, device: torch.device, length: int = 32) -> SimpleNamespace:
    g = torch.Generator().manual_seed(0)
    rows = max(1, tokens // length)
    src = torch.randint(4, VOCAB, (rows, length), generator=g)
    tgt = torch.randint(4, VOCAB, (rows, length), generator=g)
    src[:, -1] = tgt[:, -1] = EOS
    prev = torch.cat([torch.full((rows, 1), EOS), tgt[:, :-1]], 1)
    return SimpleNamespace(src_tokens=src.to(device), prev_output_tokens=prev.to(device), target=tgt.to(device),
                           langs=LangContext.single(0, 3, rows, device))


def build(name: str, device: torch.device) -> tuple[nn.Module, Callable]:
    kind, cfg = METHODS[name]
    torch.manual_seed(1)
    model = build_transformer(ModelConfig(arch="transformer_small"), vocab_size=VOCAB, num_languages=LANGS,
                              method=kind, method_cfg=cfg).to(device)
    crit = criterion(kind) or default_criterion
    return model, crit


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def train_time(model: nn.Module, crit: Callable, opt: torch.optim.Optimizer, b: SimpleNamespace, steps: int,
               device: torch.device, clock: Callable[[], float] = time.perf_counter) -> float:
    model.train()
    sync(device)
    t = clock()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss, _, ntok = crit(model, b, 0.1, PAD)
        aux = model.aux_loss()
        (loss + (aux * ntok if aux is not None else 0)).backward()
        opt.step()
    sync(device)
    return (clock() - t) / steps


@torch.no_grad()
def decode_tps(model: nn.Module, b: SimpleNamespace, steps: int, device: torch.device) -> float:
    model.eval()
    sync(device)
    t = time.perf_counter()
    enc = model.encode(b.src_tokens, b.langs)
    cache = model.init_cache(b.langs)
    tok = torch.full((b.src_tokens.size(0), 1), EOS, device=device)
    for _ in range(steps):
        tok = model.decode(tok, enc, b.langs, cache)[:, -1:].argmax(-1)
    sync(device)
    return b.src_tokens.size(0) * steps / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--decode-steps", type=int, default=32)
    ap.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    ap.add_argument("--only", action="append", choices=tuple(METHODS), help="methods to time besides naive")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    device, clock = torch.device(args.device), CLOCKS[args.clock]
    b = batch(args.tokens, device)
    names = ["naive", *(n for n in METHODS if n != "naive" and (args.only is None or n in args.only))]
    models = {name: build(name, device) for name in names}
    opts = {name: torch.optim.AdamW(m.parameters(), lr=1e-4) for name, (m, _) in models.items()}
    times: dict[str, list[float]] = {name: [] for name in names}
    for name, (m, c) in models.items():  # warm-up
        train_time(m, c, opts[name], b, 1, device)
    for _ in range(args.rounds):
        for name, (m, c) in models.items():
            times[name].append(train_time(m, c, opts[name], b, args.steps, device, clock))
    print(f"device {device}, {torch.get_num_threads()} threads, transformer_small, {b.src_tokens.numel()} target "
          f"tokens/batch, {args.rounds} rounds of {args.steps} steps, {args.clock} clock")
    print(f"{'method':10s} {'params':>8s} {'s/step':>8s} {'vs naive: median':>17s} {'min':>6s} {'max':>6s}")
    for name, ts in times.items():
        n = sum(p.numel() for p in models[name][0].parameters())
        ratios = [t / base for t, base in zip(ts, times["naive"], strict=True)]
        print(f"{name:10s} {n / 1e6:7.1f}M {statistics.median(ts):8.3f} {statistics.median(ratios):16.2f}x "
              f"{min(ratios):5.2f}x {max(ratios):5.2f}x")
    routed = [name for name in ("lms_fd", "fd") if name in models]
    decode = {}
    for name in ("naive", *routed):
        m = models[name][0]
        decode_tps(m, b, 2, device)
        decode[name] = statistics.median(decode_tps(m, b, args.decode_steps, device) for _ in range(args.rounds))
    for name in routed:
        print(f"decode {name} Share route: {decode[name]:.0f} tok/s, naive {decode['naive']:.0f} tok/s, "
              f"ratio {decode[name] / decode['naive']:.2f}")


if __name__ == "__main__":
    main()
