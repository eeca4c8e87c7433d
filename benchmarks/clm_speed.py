# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Decoding speed of sCLM, mCLM and adapters relative to the naive model, in one run (not a test; CLM Table 9).

    .venv/bin/python benchmarks/clm_speed.py [--sentences 8] [--length 24] [--steps 24] [--rounds 3] [--k 194]
    .venv/bin/python benchmarks/clm_speed.py --tiny --sentences 2 --length 4 --steps 2 --rounds 1   # the test

All models are Transformer-Base (512/2048, 8 heads, 6+6) with 95 languages and an 8K vocabulary (the
output projection of a 64K one would dilute every ratio equally), built with CLM Table 9's settings:
sCLM k=194 and mCLM k=134 (P per layer and pair, key ``xx``), CLM in every sublayer or after the FFNs only
(``-top``), language-pair adapters with bottleneck 128. Greedy: incremental decoding of ``--steps`` tokens
(no early stop: random weights); beam: ``lsnmt.decode.beam.beam_search`` with beam 4 (App. B) and a maximum
length of ``--steps``. Target tokens per second, best of ``--rounds`` rounds; rounds alternate between the
models so that a change of machine load hits all of them. The paper's ratios (GPU, Table 9): Adapter 0.92,
sCLM-top 0.84, mCLM-top 0.85, sCLM 0.61, mCLM 0.66. ``--tiny``: 16 dimensions, 2+2 layers, a vocabulary of 128
(the test).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt.decode.beam import beam_search
from lsnmt.typed import build
from models.build import build_transformer
from models.config.model import ModelConfig
from models.lang import LangContext
from models.ls.adapter import AdapterConfig
from models.ls.clm import CLMConfig
from models.transformer import Transformer

VOCAB, PAD, EOS, LANGS = 8000, 1, 2, 95
TINY = {"embed_dim": 16, "ffn_dim": 32, "heads": 2, "encoder_layers": 2, "decoder_layers": 2}


def methods(k_s: int, k_m: int) -> dict[str, tuple[str | None, Any]]:
    return {
        "naive": (None, None),
        "adapter": ("adapter", AdapterConfig(bottleneck=128, encoder="xx", decoder="xx")),
        "sclm-top": ("clm", CLMConfig(features=k_s, key="xx", sublayers=("ffn",))),
        "mclm-top": ("clm", CLMConfig(features=k_m, encoder="mclm", decoder="mclm", key="xx", sublayers=("ffn",))),
        "sclm": ("clm", CLMConfig(features=k_s, key="xx")),
        "mclm": ("clm", CLMConfig(features=k_m, encoder="mclm", decoder="mclm", key="xx")),
    }


@torch.no_grad()
def greedy_tps(model: Transformer, src: torch.Tensor, langs: LangContext, steps: int) -> float:
    t = time.perf_counter()
    enc = model.encode(src, langs)
    cache = model.init_cache(langs)
    tok = torch.full((src.size(0), 1), EOS)
    for _ in range(steps):
        tok = model.decode(tok, enc, langs, cache)[:, -1:].argmax(-1)
    return src.size(0) * steps / (time.perf_counter() - t)


@torch.no_grad()
def beam_tps(model: Transformer, src: torch.Tensor, langs: LangContext, steps: int) -> float:
    t = time.perf_counter()
    out = beam_search(model, src, langs, beam=4, lenpen=1.0, max_len_a=0.0, max_len_b=steps, eos=EOS, pad=PAD)
    tokens = sum(len(x) for x in out.tokens)
    return max(tokens, 1) / (time.perf_counter() - t)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sentences", type=int, default=8)
    ap.add_argument("--length", type=int, default=24)
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--k", type=int, default=194, help="sCLM features (mCLM: the Table 9 ratio 134/194)")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--tiny", action="store_true", help="16 dimensions, 2+2 layers, a vocabulary of 128 (the test)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    vocab = 128 if args.tiny else VOCAB
    arch = build(ModelConfig, {"arch": "transformer_base", **(TINY if args.tiny else {})}, "model")
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, vocab, (args.sentences, args.length), generator=g)
    src[:, -1] = EOS
    langs = LangContext.single(0, 7, args.sentences)
    table = methods(args.k, max(1, round(args.k * 134 / 194)))
    models = {}
    for name, (kind, cfg) in table.items():
        torch.manual_seed(1)
        models[name] = build_transformer(arch, vocab_size=vocab, num_languages=LANGS, method=kind,
                                         method_cfg=cfg).eval()
    speed: dict[str, dict[str, list[float]]] = {n: {"greedy": [], "beam": []} for n in models}
    for m in models.values():  # warm-up
        greedy_tps(m, src, langs, 4)
        beam_tps(m, src, langs, 4)
    for _ in range(args.rounds):
        for name, m in models.items():
            speed[name]["greedy"].append(greedy_tps(m, src, langs, args.steps))
            speed[name]["beam"].append(beam_tps(m, src, langs, args.steps))
    size = "transformer_base" + (" (tiny)" if args.tiny else "")
    print(f"CPU, {torch.get_num_threads()} threads, {size}, {args.sentences} sentences x {args.length} "
          f"source tokens, {args.steps} target steps, best of {args.rounds}; sCLM k={args.k}")
    print(f"{'method':9s} {'params':>12s} {'greedy tok/s':>12s} {'ratio':>6s} {'beam4 tok/s':>12s} {'ratio':>6s}")
    base = {mode: max(speed["naive"][mode]) for mode in ("greedy", "beam")}
    for name, s in speed.items():
        n = sum(p.numel() for p in models[name].parameters())
        g_, b_ = max(s["greedy"]), max(s["beam"])
        print(f"{name:9s} {n:12,} {g_:12.1f} {g_ / base['greedy']:6.2f} {b_:12.1f} {b_ / base['beam']:6.2f}")


if __name__ == "__main__":
    main()
