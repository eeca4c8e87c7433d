"""Beam-search decoding speed: the incremental (cached) decoder against recomputing every prefix.

    .venv/bin/python benchmarks/decode_speed.py [--beam 5 --batch 16 --length 40 --arch transformer_small]

Both runs use the same model, the same sources and the same search code
(lsnmt.decode.beam_search); the reference only swaps the key/value cache for
a stand-in that keeps the whole prefix and re-runs the decoder on it at every
step (what decoding without a cache costs). EOS is banned until ``length``
tokens and forced there, so both produce exactly ``batch * length`` tokens.
The figure that matters is the ratio, measured in one process on one machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsnmt.config import ModelConfig
from lsnmt.decode.beam import beam_search
from models.build import build_transformer
from models.lang import LangContext


class PrefixCache:
    """Stand-in cache: remembers the whole prefix so the decoder can recompute it from scratch."""

    def __init__(self) -> None:
        self.prefix: torch.Tensor | None = None

    def reorder_(self, order: torch.Tensor) -> None:
        if self.prefix is not None:
            self.prefix = self.prefix.index_select(0, order)

    def select_(self, rows: torch.Tensor, sentences: torch.Tensor, langs: object = None) -> None:
        del sentences, langs  # the encoder output is the search's, selected by it
        self.reorder_(rows)


class Uncached(torch.nn.Module):
    """The same model, decoding every step over the full prefix without cached keys/values."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model
        self.max_positions = model.max_positions

    def encode(self, src, langs):
        return self.model.encode(src, langs)

    def init_cache(self, langs, beam=1):
        return PrefixCache()

    def decode(self, last, enc, langs, cache):
        cache.prefix = last if cache.prefix is None else torch.cat([cache.prefix, last], dim=1)
        return self.model.decode(cache.prefix, enc, langs, None)[:, -1:]


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="transformer_small")
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--src-len", type=int, default=25)
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = build_transformer(ModelConfig(arch=args.arch), vocab_size=args.vocab, num_languages=2).eval()
    src = torch.randint(4, args.vocab, (args.batch, args.src_len))
    src[:, -1] = 2
    langs = LangContext.single(0, 1, args.batch)
    kw = dict(beam=args.beam, max_len_a=0.0, max_len_b=args.length, min_len=args.length)
    cached = beam_search(model, src, langs, **kw)
    reference = beam_search(Uncached(model), src, langs, **kw)
    same = cached.tokens == reference.tokens
    t_cached = timed(lambda: beam_search(model, src, langs, **kw), args.repeats)
    t_ref = timed(lambda: beam_search(Uncached(model), src, langs, **kw), args.repeats)
    tokens = args.batch * args.length
    print(f"{args.arch}, beam {args.beam}, batch {args.batch}, {args.length} tokens per sentence, "
          f"{args.threads} threads, same hypotheses: {same}")
    print(f"cached     {tokens / t_cached:10.0f} tokens/s  ({t_cached:.2f}s)")
    print(f"uncached   {tokens / t_ref:10.0f} tokens/s  ({t_ref:.2f}s)")
    print(f"speed-up   {t_ref / t_cached:10.2f}x")


if __name__ == "__main__":
    main()
