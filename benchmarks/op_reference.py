# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Operations per training update against references (not a test): the naive model beside PyTorch's own
``nn.Transformer`` and Hugging Face MarianMT at the same dimensions, in one run.

    python benchmarks/op_reference.py [--experiment default_gpu] [--updates 20] [--repeats 3] [--no-marian]

Issue 38 counts the ATen operations one eager update dispatches (``lsnmt.train.ops``) because on a GPU, for a model
whose maths takes a few milliseconds, the host's dispatch is the update's time. A count means something only
beside a reference: here, three implementations of the same update (forward, label-smoothed loss, backward, fused
AdamW; ``--experiment``'s layer counts, heads, dropout, norm placement; one mixed-direction batch of
``--max-tokens``), each counted after one warm-up update:

* ``ours``: the trainer's update of the naive model (:func:`lsnmt.train.ops.one_update`);
* ``torch``: ``torch.nn.Transformer`` (``batch_first``, ``norm_first`` as the experiment sets it: both LayerNorm
  placements are PyTorch's own), with the same tied and scaled embedding, sinusoidal positions, padding masks and a
  causal decoder mask;
* ``marian``: ``transformers``' MarianMT (``benchmarks/marian_model.py``; post-norm, the only placement it has),
  left out with a printed line when ``transformers`` is not installed.

The count does not depend on the width or the machine. Printed beside it: each update's host time on this CPU at
16 dimensions and a vocabulary of 128 (maths negligible: the time is dispatch and autograd), as a ratio to ours
after a warm-up (``benchmarks/warmup.py``), the order alternating between repeats: whether fewer operations is
also less host time. What a GPU pays per operation (a kernel launch for a computing one) only a GPU can show.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import Tensor, nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.marian_model import marian_update as build_marian
from benchmarks.warmup import warm_up
from lsnmt.data.corpus import Sample
from lsnmt.experiment.params import Experiment, Params
from lsnmt.train.ops import EOS, PAD, mixed_batch, one_update, step_ops
from models.config.model import resolve_dims
from models.embedding import sinusoidal_table

VOCAB, WIDTH = 128, 16
"""The vocabulary and width every model is built at (the count does not depend on them; the time is host time)."""


class TorchTransformer(nn.Module):
    """``nn.Transformer`` at an experiment's dimensions, with our embedding: ``sqrt(d)``-scaled tokens, sinusoidal
    positions, dropout, tied output projection."""

    def __init__(self, exp: Experiment, vocab: int) -> None:
        super().__init__()
        dims = resolve_dims(exp.model)
        d = dims.embed_dim
        self.embed = nn.Embedding(vocab, d, padding_idx=PAD)
        self.positions: Tensor
        self.register_buffer("positions", sinusoidal_table(1024, d, None), persistent=False)
        self.dropout, self.scale = nn.Dropout(exp.model.dropout), math.sqrt(d)
        with warnings.catch_warnings():  # nested tensors are off under norm_first: PyTorch says so, we know
            warnings.simplefilter("ignore", UserWarning)
            self.core = nn.Transformer(
                d,
                dims.heads,
                dims.encoder_layers,
                dims.decoder_layers,
                dims.ffn_dim,
                dropout=exp.model.dropout,
                batch_first=True,
                norm_first=exp.model.normalize_before,
            )

    def embed_tokens(self, tokens: Tensor) -> Tensor:
        return self.dropout(self.embed(tokens) * self.scale + self.positions[: tokens.size(1)])

    def forward(self, src: Tensor, prev: Tensor) -> Tensor:
        pads = src.eq(PAD)
        causal = nn.Transformer.generate_square_subsequent_mask(prev.size(1))
        h = self.core(
            self.embed_tokens(src),
            self.embed_tokens(prev),
            src_key_padding_mask=pads,
            memory_key_padding_mask=pads,
            tgt_mask=causal,
            tgt_is_causal=True,
        )
        return F.linear(h, self.embed.weight)


def torch_update(exp: Experiment, vocab: int, sample: Sample) -> Callable[[], None]:
    """``step()``: one update of :class:`TorchTransformer` (label-smoothed loss over the non-pad tokens, fused
    AdamW, gradients set to ``None``), as ours."""
    torch.manual_seed(0)
    model = TorchTransformer(exp, vocab).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        logits = model(sample.src_tokens, sample.prev_output_tokens)
        loss = F.cross_entropy(
            logits.view(-1, vocab),
            sample.target.view(-1),
            ignore_index=PAD,
            label_smoothing=exp.train.label_smoothing,
            reduction="sum",
        )
        (loss / sample.ntokens).backward()
        opt.step()

    return step


def marian_update(exp: Experiment, vocab: int, sample: Sample) -> Callable[[], None] | None:
    """``step()``: one update of MarianMT (``benchmarks/marian_model.py``); ``None`` without ``transformers``."""
    try:
        update = build_marian(exp, vocab, torch.device("cpu"), PAD, EOS)  # imports transformers
    except ImportError:
        return None
    one = SimpleNamespace(samples=[sample], ntokens=sample.ntokens)
    return lambda: update(one)


def timed(
    steps: dict[str, Callable[[], None]], updates: int, repeats: int, warmup_seconds: float
) -> dict[str, list[float]]:
    """Seconds per update of each, per repeat, after a warm-up; the order alternates between repeats."""

    def clock(step: Callable[[], None], n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            step()
        return (time.perf_counter() - start) / n

    for step in steps.values():
        warm_up(functools.partial(clock, step, 1), warmup_seconds)
    out: dict[str, list[float]] = {name: [] for name in steps}
    names = list(steps)
    for r in range(repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            out[name].append(clock(steps[name], updates))
    return out


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    """Run the comparison (module docstring); returns per model ``ops``, ``kernels`` and ``seconds`` (median)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", default="default_gpu")
    ap.add_argument("--max-tokens", type=int, default=512, help="tokens in the batch (the count does not depend on it)")
    ap.add_argument("--updates", type=int, default=20, help="updates per repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup-seconds", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-marian", action="store_true", help="leave MarianMT out")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    exp = Params.load(ROOT / "params.yaml").get(args.experiment)
    exp = dataclasses.replace(
        exp,
        model=dataclasses.replace(
            exp.model, embed_dim=WIDTH, ffn_dim=2 * WIDTH, heads=min(2, resolve_dims(exp.model).heads)
        ),
    )
    sample = mixed_batch(exp, VOCAB, max_tokens=args.max_tokens, length=12)
    steps: dict[str, Callable[[], None]] = {
        "ours": one_update(exp, "naive", vocab_size=VOCAB, sample=sample),
        "torch": torch_update(exp, VOCAB, sample),
    }
    marian = None if args.no_marian else marian_update(exp, VOCAB, sample)
    if marian is not None:
        steps["marian"] = marian
    elif not args.no_marian:
        print("marian: left out (transformers is not installed)")
    ops = {name: step_ops(step) for name, step in steps.items()}
    times = timed(steps, args.updates, args.repeats, args.warmup_seconds)
    dims = resolve_dims(exp.model)
    print(
        f"{args.experiment}'s update at {WIDTH} dimensions ({dims.encoder_layers}+{dims.decoder_layers} layers, "
        f"{'pre' if exp.model.normalize_before else 'post'}-norm; MarianMT post-norm), {sample.target.shape[0]} "
        f"sentences, CPU {torch.get_num_threads()} thread(s), {args.repeats} x {args.updates} updates timed"
    )
    print("| model | ops per update (computing) | ops / ours | host ms per update | time / ours (range) |")
    print("| --- | ---: | ---: | ---: | --- |")
    base = times["ours"]
    results: dict[str, dict[str, float]] = {}
    for name, log in ops.items():
        ratios = [t / b for t, b in zip(times[name], base, strict=True)]
        results[name] = {"ops": log.total, "kernels": log.kernels, "seconds": statistics.median(times[name])}
        print(
            f"| {name} | {log.total:,} ({log.kernels:,}) | {log.total / ops['ours'].total:.2f}x | "
            f"{results[name]['seconds'] * 1e3:.2f} | {statistics.median(ratios):.2f}x "
            f"({min(ratios):.2f}-{max(ratios):.2f}) |"
        )
    for name, log in ops.items():
        print(f"  {name}: {log.report(10)}")
    return results


if __name__ == "__main__":
    main()
