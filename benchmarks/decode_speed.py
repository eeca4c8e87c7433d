"""Beam-search decoding speed: the incremental (cached) decoder against recomputing every prefix.

    .venv/bin/python benchmarks/decode_speed.py [--beam 5 --batch 16 --length 40 --arch transformer_small]
    .venv/bin/python benchmarks/decode_speed.py --tiny --beam 2 --batch 2 --length 3 --repeats 1   # the test

Both runs use the same model, the same sources and the same search code
(lsnmt.decode.beam.beam_search); the reference only swaps the key/value cache for
a stand-in that keeps the whole prefix and re-runs the decoder on it at every
step (what decoding without a cache costs). EOS is banned until ``length``
tokens and forced there, so both produce exactly ``batch * length`` tokens.
The figure that matters is the ratio, measured in one process on one machine. ``--tiny``: the preset at 32
dimensions, 2+2 layers and a vocabulary of 128 (the test).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import torch
from torch import Tensor

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsnmt.decode.beam import beam_search
from lsnmt.decode.common import Seq2Seq
from lsnmt.typed import build
from models.build import build_transformer
from models.config.model import ModelConfig
from models.lang import LangContext
from models.transformer import EncoderOut, Transformer

TINY = {"embed_dim": 32, "ffn_dim": 64, "heads": 2, "encoder_layers": 2, "decoder_layers": 2}


class PrefixCache:
    """Stand-in cache: remembers the whole prefix so the decoder can recompute it from scratch."""

    def __init__(self) -> None:
        self.prefix: Tensor | None = None

    def reorder_(self, order: Tensor) -> None:
        if self.prefix is not None:
            self.prefix = self.prefix.index_select(0, order)

    def select_(self, rows: Tensor, sentences: Tensor, langs: object = None) -> None:
        del sentences, langs  # the encoder output is the search's, selected by it
        self.reorder_(rows)


class Uncached(torch.nn.Module):
    """The same model, decoding every step over the full prefix without cached keys/values (the search drives it
    through :class:`~lsnmt.decode.common.Seq2Seq`'s calls; its cache is a :class:`PrefixCache`)."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model
        self.max_positions = model.max_positions

    def encode(self, src: Tensor, langs: LangContext) -> EncoderOut:
        return self.model.encode(src, langs)

    def init_cache(self, langs: LangContext, beam: int = 1) -> PrefixCache:
        return PrefixCache()

    def decode(self, last: Tensor, enc: EncoderOut, langs: LangContext, cache: PrefixCache) -> Tensor:
        cache.prefix = last if cache.prefix is None else torch.cat([cache.prefix, last], dim=1)
        return self.model.decode(cache.prefix, enc, langs, None)[:, -1:]


def timed(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="transformer_small")
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--src-len", type=int, default=25)
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--tiny", action="store_true", help="32 dimensions, 2+2 layers, a vocabulary of 128")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    vocab = 128 if args.tiny else args.vocab
    cfg = build(ModelConfig, {"arch": args.arch, **(TINY if args.tiny else {})}, "model")
    model = build_transformer(cfg, vocab_size=vocab, num_languages=2).eval()
    uncached = cast(Seq2Seq, Uncached(model))  # the search's calls, answered without a cache
    src = torch.randint(4, vocab, (args.batch, args.src_len))
    src[:, -1] = 2
    langs = LangContext.single(0, 1, args.batch)

    def search(m: Seq2Seq) -> list[list[int]]:
        return beam_search(m, src, langs, beam=args.beam, max_len_a=0.0, max_len_b=args.length,
                           min_len=args.length).tokens

    same = search(model) == search(uncached)
    t_cached = timed(lambda: search(model), args.repeats)
    t_ref = timed(lambda: search(uncached), args.repeats)
    tokens = args.batch * args.length
    print(f"{args.arch}{' (tiny)' if args.tiny else ''}, beam {args.beam}, batch {args.batch}, {args.length} tokens "
          f"per sentence, {args.threads} threads, same hypotheses: {same}")
    print(f"cached     {tokens / t_cached:10.0f} tokens/s  ({t_cached:.2f}s)")
    print(f"uncached   {tokens / t_ref:10.0f} tokens/s  ({t_ref:.2f}s)")
    print(f"speed-up   {t_ref / t_cached:10.2f}x")


if __name__ == "__main__":
    main()
