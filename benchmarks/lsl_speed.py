# ruff: noqa: E402  (imports follow the sys.path set-up)
"""LSL's speed claims, against the naive model in the same run (not a test; Pires et al. 2023, App. H, Sec. 3.2).

    .venv/bin/python benchmarks/lsl_speed.py [--sentences 8] [--length 20] [--steps 20] [--rounds 5]
        [--threads 1] [--train-dim 256] [--train-tokens 1024] [--train-steps 2]

**Inference** (Table 13: LSL-NAS 61.3 tokens/s vs the separate-decoder baseline's 61.7 on one CPU thread,
195.0 vs 194.3 on a V100): target tokens per second translating one sentence at a time (batch size 1) with
beam 5 (``lsnmt.decode.beam.beam_search``), on ``--threads`` CPU threads, of the paper's models: 16+3 layers,
512 / 2048, 8 heads, 10 languages; the separate-decoder baseline (``naive``) and LSL-NAS (SRC={3, 4} &
TGT={13, 14, 15}), and the shared-decoder baseline and LSL-NAS-SD (SRC={4} & TGT={12 ... 16}). Random weights,
so every hypothesis runs to the maximum length ``--steps``: each model decodes exactly the same number of
tokens. The vocabulary is 8K rather than 250K (the output projection would dominate every model alike).
Rounds alternate between the models so that a change of machine load hits all of them; mean +- standard
deviation over rounds, and the ratio of means.

**Search** (Sec. 3.2: "the amount of computation increases by a factor of 3"): time of a training step
(forward, backward, Adam) of the search model, every encoder layer a shared layer plus a source- and a
target-indexed LSL mixed by Eq. 1, and of LSL-NAS, relative to the naive model, on one one-direction batch
of about ``--train-tokens`` target tokens. 16+3 layers and 10 languages at width ``--train-dim`` (FFN 4x,
heads dim/64): the search model at the paper's width 512 needs ~11 GB with its Adam state.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt.decode.beam import beam_search
from lsnmt.train.loss import default_criterion
from models.build import build_transformer
from models.config.model import ModelConfig
from models.lang import LangContext
from models.ls.lsl import LSLConfig, LSLSearchConfig, search_factories
from models.param_count import inference_params, train_params

VOCAB, PAD, EOS, LANGS = 8000, 1, 2, 10
SRC, TGT = 1, 0  # de -> en in flores10_lsl's language order (en de es ...), the direction of Table 13
NAS = LSLConfig(src=(3, 4), tgt=(13, 14, 15))
NAS_SD = LSLConfig(src=(4,), tgt=(12, 13, 14, 15, 16))


def shape(decoder: str, dim: int = 512) -> ModelConfig:
    return ModelConfig(arch="transformer_base", embed_dim=dim, ffn_dim=4 * dim, heads=max(1, dim // 64),
                       encoder_layers=16, decoder_layers=3, decoder=decoder, dropout=0.0)  # type: ignore[arg-type]


def build(cfg: ModelConfig, method: str | None = None, method_cfg: Any = None, factories: Any = None) -> nn.Module:
    torch.manual_seed(1)
    return build_transformer(cfg, vocab_size=VOCAB, num_languages=LANGS, method=method, method_cfg=method_cfg,
                             factories=factories)


@torch.no_grad()
def decode_tps(model: nn.Module, sources: list[torch.Tensor], steps: int) -> float:
    """Tokens per second of beam-5 decoding, one sentence at a time."""
    tokens, start = 0, time.perf_counter()
    for src in sources:
        out = beam_search(model, src.unsqueeze(0), LangContext.single(SRC, TGT, 1), beam=5, lenpen=1.0,
                          max_len_a=0.0, max_len_b=steps, eos=EOS, pad=PAD)
        tokens += len(out.tokens[0]) + 1
    return tokens / (time.perf_counter() - start)


def inference(args: argparse.Namespace) -> None:
    models = {
        "separate-decoder baseline": build(shape("per-target")),
        "LSL-NAS": build(shape("per-target"), "lsl", NAS),
        "shared-decoder baseline": build(shape("shared")),
        "LSL-NAS-SD": build(shape("shared"), "lsl", NAS_SD),
    }
    g = torch.Generator().manual_seed(0)
    sources = [torch.cat([torch.randint(4, VOCAB, (args.length - 1,), generator=g), torch.tensor([EOS])])
               for _ in range(args.sentences)]
    for m in models.values():
        m.eval()
        decode_tps(m, sources[:1], 2)  # warm-up
    speed: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, m in models.items():
            speed[name].append(decode_tps(m, sources, args.steps))
    print(f"Inference: CPU, {torch.get_num_threads()} thread(s), batch size 1, beam 5, {args.sentences} sentences x "
          f"{args.steps} target tokens, {args.rounds} rounds; 16+3 layers, 512/2048, 10 languages, {VOCAB} vocabulary")
    print(f"{'model':28s} {'|θ|':>8s} {'|θeff|':>8s} {'tokens/s':>16s} {'vs baseline':>11s}")
    for name, values in speed.items():
        base = "separate-decoder baseline" if "SD" not in name and "shared" not in name else "shared-decoder baseline"
        m = models[name]
        mean, std = statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0
        ratio = mean / statistics.mean(speed[base])
        print(f"{name:28s} {train_params(m) / 1e6:7.1f}M {inference_params(m, SRC, TGT) / 1e6:7.1f}M "
              f"{mean:9.1f} ± {std:4.1f} {ratio:11.3f}")


def batch(tokens: int, length: int = 32) -> SimpleNamespace:
    g = torch.Generator().manual_seed(0)
    rows = max(1, tokens // length)
    src = torch.randint(4, VOCAB, (rows, length), generator=g)
    tgt = torch.randint(4, VOCAB, (rows, length), generator=g)
    src[:, -1] = tgt[:, -1] = EOS
    prev = torch.cat([torch.full((rows, 1), EOS), tgt[:, :-1]], 1)
    return SimpleNamespace(src_tokens=src, prev_output_tokens=prev, target=tgt,
                           langs=LangContext.single(SRC, TGT, rows))


def step_time(model: nn.Module, opt: torch.optim.Optimizer, b: SimpleNamespace, steps: int) -> float:
    model.train()
    start = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss, _, _ = default_criterion(model, b, 0.1, PAD)
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps


def search_cost(args: argparse.Namespace) -> None:
    cfg = shape("per-target", args.train_dim)
    models = {"naive": build(cfg), "LSL-NAS": build(cfg, "lsl", NAS),
              "search": build(cfg, factories=search_factories(LSLSearchConfig()))}
    opts = {name: torch.optim.Adam(m.parameters(), lr=1e-4) for name, m in models.items()}
    b = batch(args.train_tokens)
    for name, m in models.items():
        step_time(m, opts[name], b, 1)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, m in models.items():
            times[name].append(step_time(m, opts[name], b, args.train_steps))
    print(f"\nTraining step: CPU, {torch.get_num_threads()} thread(s), 16+3 layers, width {args.train_dim}, 10 "
          f"languages, {b.src_tokens.numel()} target tokens per batch, best of {args.rounds} rounds")
    print(f"{'model':10s} {'|θ|':>8s} {'s/step':>8s} {'vs naive':>8s}")
    base = min(times["naive"])
    for name, ts in times.items():
        print(f"{name:10s} {train_params(models[name]) / 1e6:7.1f}M {min(ts):8.3f} {min(ts) / base:8.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=8)
    ap.add_argument("--length", type=int, default=20, help="source tokens per sentence (EOS included)")
    ap.add_argument("--steps", type=int, default=20, help="target tokens decoded per sentence")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (Table 13: one)")
    ap.add_argument("--train-dim", type=int, default=256)
    ap.add_argument("--train-tokens", type=int, default=1024)
    ap.add_argument("--train-steps", type=int, default=2)
    ap.add_argument("--skip-inference", action="store_true")
    ap.add_argument("--skip-search", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if not args.skip_inference:
        inference(args)
    if not args.skip_search:
        search_cost(args)


if __name__ == "__main__":
    main()
