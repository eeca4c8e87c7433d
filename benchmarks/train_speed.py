# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Training speed: the project's trainer against Hugging Face MarianMT at equal dimensions (not a test).

    python benchmarks/train_speed.py [--repeats 7] [--steps 3] [--threads 2] [--compile] [--tiny]

Both models: 6+6 post-norm layers, d 512, FFN 1024, 4 heads, ReLU, sinusoidal positions, scaled and tied
embeddings, a vocabulary of 8,000, residual dropout 0.1 (none on attention and activations, fairseq's defaults),
label smoothing 0.1, AdamW; batches of 64 sentences x 30 tokens (29 + EOS on both sides, no padding), the same
batches for both. ``--tiny`` (the test): 32 dimensions, 2+2 layers, a vocabulary of 128, batches of 4 sentences.

* **project**: what ``stages.train`` runs per update: the trainer's loop (:func:`lsnmt.train.loop.run_updates`,
  its checks every ``--steps`` updates), its feed (batches collated ahead on a background thread from encoded
  shards) and :func:`lsnmt.train.step.train_step` (dropout re-seeded per batch, the fused label-smoothed loss,
  the gradient norm, fused AdamW, the lr schedule); with ``--compile``, ``train.compile``.
* **marian**: what a user would write instead: ``MarianMTModel(input_ids, attention_mask, decoder_input_ids)``,
  ``F.cross_entropy(..., label_smoothing=0.1)`` summed over the tokens and divided by their number, backward,
  ``torch.optim.AdamW`` with its default implementation (a loop over parameters on the CPU); and
  **marian-fused**: the same with ``AdamW(fused=True)``, the project's optimizer (so that the optimizer is not
  what the ratio measures).

Each repeat times ``--steps`` updates of every contestant back to back (the order rotates between repeats) and
gives one ratio ``t_marian / t_project`` per Marian variant (> 1: the project is faster); printed: the median over
repeats and its range, on the wall clock and on the process's CPU clock (all its threads: less sensitive to other
jobs taking the cores, as on a shared machine). Compare ratios, never absolute times.

:func:`time_steps` (one model-level step: forward, :func:`~lsnmt.train.loss.sequence_loss`, backward, optimizer)
is what ``benchmarks/vs_marian.py`` times for both models.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt.data.corpus import Sample, Vocab, collate, load_split
from lsnmt.data.shards import ShardWriter
from lsnmt.experiment.params import Experiment
from lsnmt.io import write_json
from lsnmt.train.batching import BatchStream, Pool
from lsnmt.train.curve import Meters
from lsnmt.train.dist import Dist
from lsnmt.train.loop import Job, run_updates
from lsnmt.train.loss import sequence_loss
from lsnmt.train.step import train_step
from lsnmt.train.trainer import setup, wrap
from lsnmt.typed import build
from models.build import build_transformer
from models.lang import LangContext

if TYPE_CHECKING:
    from transformers import MarianMTModel

PAD, EOS = 1, 2
LENGTH = 30


@dataclass(frozen=True, kw_only=True)
class Size:
    """Both models' dimensions (post-norm, both 6+6 in the benchmark), the vocabulary and the sentences a batch."""

    embed_dim: int = 512
    ffn_dim: int = 1024
    heads: int = 4
    layers: int = 6
    vocab: int = 8000
    rows: int = 64

    def model(self) -> dict[str, object]:
        """The project's ``model`` section: ``transformer_small`` at these dimensions."""
        dims = {"embed_dim": self.embed_dim, "ffn_dim": self.ffn_dim, "heads": self.heads}
        return {"arch": "transformer_small", **dims, "encoder_layers": self.layers, "decoder_layers": self.layers}


SMALL = Size()
"""``transformer_small`` (the benchmark)."""
TINY = Size(embed_dim=32, ffn_dim=64, heads=2, layers=2, vocab=128, rows=4)
"""``--tiny``: the same code on a model that trains in milliseconds (the test)."""


class Batch(Protocol):
    """What :func:`time_steps` reads of a batch (a collated :class:`~lsnmt.data.corpus.Sample`)."""

    src_tokens: torch.Tensor
    prev_output_tokens: torch.Tensor
    target: torch.Tensor
    langs: LangContext

    def to(self, device: torch.device) -> Batch: ...


def time_steps(model: nn.Module, opt: torch.optim.Optimizer, samples: Sequence[Batch], device: torch.device) -> float:
    """Seconds for one model-level training step on each of ``samples``."""
    model.train()
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    for s in samples:
        s = s.to(device)
        loss, _, _ = sequence_loss(model(s.src_tokens, s.prev_output_tokens, s.langs), s.target, 0.1, PAD)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    sync()
    return time.perf_counter() - start


def marian_mt(size: Size = SMALL, dropout: float = 0.1) -> MarianMTModel:
    """MarianMT with the project's dimensions ``size`` (``transformers`` is imported here); EOS is forced at the
    maximum length in ``generate`` (``benchmarks/vs_marian.py`` decodes with it)."""
    from transformers import MarianConfig, MarianMTModel

    cfg = MarianConfig(vocab_size=size.vocab, decoder_vocab_size=size.vocab, d_model=size.embed_dim,
                       encoder_layers=size.layers, decoder_layers=size.layers, encoder_attention_heads=size.heads,
                       decoder_attention_heads=size.heads, encoder_ffn_dim=size.ffn_dim, decoder_ffn_dim=size.ffn_dim,
                       activation_function="relu", dropout=dropout, attention_dropout=0.0,
                       activation_dropout=0.0, max_position_embeddings=1024, scale_embedding=True,
                       pad_token_id=PAD, eos_token_id=EOS, decoder_start_token_id=EOS, forced_eos_token_id=EOS,
                       share_encoder_decoder_embeddings=True, tie_word_embeddings=True)
    return MarianMTModel(cfg)


def write_corpus(root: Path, sentences: int, size: Size = SMALL, seed: int = 0) -> Path:
    """An encoded corpus (as the encode stage writes it) of en-de and de-en: ``sentences`` pairs each, every
    sentence 29 ids (30 with EOS) drawn uniformly from the vocabulary; a few validation pairs."""
    rng = np.random.default_rng(seed)
    for split, n in (("train", sentences), ("valid", 8)):
        for name in ("en-de", "de-en"):
            for side in ("src", "tgt"):
                (root / split).mkdir(parents=True, exist_ok=True)
                w = ShardWriter(root / split / f"{name}.{side}", size.vocab)
                w.add_many(rng.integers(4, size.vocab, (n, LENGTH - 1)).tolist())
                w.close()
    write_json(root / "meta.json", {"vocab_size": size.vocab, "bos": 0, "pad": PAD, "eos": EOS, "unk": 3,
                                    "languages": ["en", "de"], "shards": {}})
    return root


def experiment(compile_: bool, size: Size = SMALL) -> Experiment:
    """``transformer_small`` at ``size`` with batches of exactly ``size.rows`` x 30 tokens; no validation or saves
    while timed. ``train.compile`` is set only when asked for (the setting's default otherwise)."""
    data = {"languages": ["en", "de"], "sources": [{"name": "bitext", "kind": "embedded", "splits": ["train"]},
                                                   {"name": "mw", "kind": "embedded", "splits": ["valid", "test"]}]}
    never = 10**6
    train: dict[str, object] = {"max_tokens": size.rows * LENGTH, "max_steps": never, "warmup_steps": 100,
                                "label_smoothing": 0.1, "log_every": never, "validate_every": never,
                                "save_every": never}
    if compile_:
        train["compile"] = "default"  # inductor: what a CPU can compile
    return build(Experiment, {"name": "bench", "data": data, "model": size.model(), "train": train}, "")


def no_save(step: int, *, periodic: bool, improved: bool) -> None:
    """The timed loop saves nothing."""


def project(bin_dir: Path, compile_: bool, steps: int, size: Size = SMALL) -> Callable[[], None]:
    """``steps`` updates of the trainer's loop (no saves, a check after the last update) per call."""
    run, _ = setup(experiment(compile_, size), bin_dir, Dist.from_env(), build_transformer, None)
    wrap(run, None)

    def updates() -> None:
        job = Job(name="bench", total=run.step + steps, log_every=steps, save_every=10**9,
                  update=lambda _n: train_step(run, run.feed.next()), save=no_save)
        run_updates(job, run.step, Meters())

    return updates


def marian(samples: list[Sample], fused: bool, size: Size = SMALL) -> Callable[[], None]:
    """One user-written MarianMT training step per sample, per call."""
    model = marian_mt(size).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True if fused else None)

    def steps() -> None:
        for s in samples:
            logits = model(input_ids=s.src_tokens, attention_mask=s.src_tokens.ne(PAD),
                           decoder_input_ids=s.prev_output_tokens).logits  # (B, T, V)
            loss = F.cross_entropy(logits.reshape(-1, size.vocab), s.target.reshape(-1), ignore_index=PAD,
                                   label_smoothing=0.1, reduction="sum")
            opt.zero_grad(set_to_none=True)
            (loss / s.ntokens).backward()
            opt.step()

    return steps


def measure(calls: dict[str, Callable[[], None]], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Wall-clock and CPU seconds (all threads of the process) per repeat of each call; the order rotates."""
    for fn in calls.values():  # warm-up: allocator, kernels, compilation
        fn()
    names = list(calls)
    seconds: dict[str, dict[str, list[float]]] = {"wall": {n: [] for n in names}, "cpu": {n: [] for n in names}}
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            wall, cpu = time.perf_counter(), time.process_time()
            calls[name]()
            seconds["cpu"][name].append(time.process_time() - cpu)
            seconds["wall"][name].append(time.perf_counter() - wall)
    return seconds


def report(seconds: dict[str, dict[str, list[float]]], steps: int) -> None:
    for clock, per in seconds.items():
        print(f"{clock} clock, seconds per update: " + ", ".join(
            f"{n} {statistics.median(s) / steps:.3f} ({min(s) / steps:.3f}-{max(s) / steps:.3f})"
            for n, s in per.items()))
        for name in ("marian", "marian-fused"):
            ratios = [m / p for m, p in zip(per[name], per["project"], strict=True)]
            print(f"  t_{name} / t_project: median {statistics.median(ratios):.3f}x, range "
                  f"{min(ratios):.3f}x-{max(ratios):.3f}x  (> 1: the project is faster)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--steps", type=int, default=3, help="updates per repeat and contestant")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="the project with train.compile")
    ap.add_argument("--tiny", action="store_true", help="32 dimensions, 2+2 layers, 4-sentence batches (the test)")
    args = ap.parse_args(argv)
    size = TINY if args.tiny else SMALL
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = write_corpus(Path(tmp), size.rows * args.steps * (args.repeats + 2), size)
        ours = project(bin_dir, args.compile, args.steps, size)
        cfg, vocab = experiment(False, size).train, Vocab.load(bin_dir)
        dirs = load_split(bin_dir, "train", (("en", "de"), ("de", "en")), vocab)
        samples = [collate(dirs, b.rows, vocab) for b in BatchStream(Pool.build(dirs, cfg), cfg, 1).take(args.steps)]
        if {tuple(s.target.shape) for s in samples} != {(size.rows, LENGTH)}:
            raise RuntimeError(f"batches are not {size.rows} x {LENGTH}: {[tuple(s.target.shape) for s in samples]}")
        calls = {"project": ours, "marian": marian(samples, False, size), "marian-fused": marian(samples, True, size)}
        seconds = measure(calls, args.repeats)
    print(f"cpu, {torch.get_num_threads()} threads, {args.repeats} repeats of {args.steps} updates of "
          f"{size.rows} x {LENGTH} tokens, {size.embed_dim} dimensions; project{' compiled' if args.compile else ''}")
    report(seconds, args.steps)


if __name__ == "__main__":
    main()
