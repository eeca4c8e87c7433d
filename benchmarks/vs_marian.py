# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Speed of the naive ``transformer_small`` against Hugging Face MarianMT at equal dimensions (not a test).

    python -m benchmarks.vs_marian [--repeats 7] [--threads 2] [--steps 5] [--device cpu] [--tiny]

Both models: 512/1024, 4 heads, 6+6 post-norm layers, ReLU, sinusoidal positions, scaled and tied
embeddings, an 8,000-token vocabulary, dropout 0.1 (training), same random sources. One process measures:

* training: ``benchmarks/train_speed.py``'s :func:`time_steps` (forward, label-smoothed loss, backward,
  AdamW step) on ``--steps`` batches of 64 sentences x 30 tokens; AdamW (foreach) for both;
* greedy and beam-5 decoding of 32 sentences (sources of 10-40 tokens) x 40 generated tokens: EOS is banned
  for 40 tokens and forced after them, so both decode 41 steps per sentence. The project decodes through
  ``lsnmt.decode.beam.beam_search`` (what ``translate`` calls; beam 1 runs greedy search), Marian through ``generate``.

Each repeat times the project and Marian back to back (the order alternates between repeats) and gives one
ratio ``t_marian / t_project`` (> 1: the project is faster); printed: the median ratio over repeats and its
range. The machine may be shared: compare ratios, never absolute times. ``--tiny`` (the test): both models at
``train_speed.TINY``'s 32 dimensions, 2+2 layers and 128 tokens, training batches of 4 sentences.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.train_speed import EOS, PAD, SMALL, TINY, Size, marian_mt, time_steps
from lsnmt.decode.beam import beam_search
from lsnmt.typed import build
from models.build import build_transformer
from models.config.model import ModelConfig
from models.lang import LangContext
from models.transformer import Transformer

if TYPE_CHECKING:
    from transformers import MarianMTModel


class MarianSeq2Seq(nn.Module):
    """``forward(src, prev, langs) -> logits (B, T, V)``, as :func:`time_steps` calls the project's model."""

    def __init__(self, model: MarianMTModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: Tensor, prev: Tensor, langs: LangContext) -> Tensor:
        del langs
        return self.model(
            input_ids=src, attention_mask=src.ne(PAD), decoder_input_ids=prev, decoder_attention_mask=prev.ne(PAD)
        ).logits


@dataclass
class Batch:
    """What :func:`time_steps` reads of a training batch."""

    src_tokens: Tensor
    prev_output_tokens: Tensor
    target: Tensor
    langs: LangContext

    def to(self, device: torch.device) -> Batch:
        return Batch(
            self.src_tokens.to(device),
            self.prev_output_tokens.to(device),
            self.target.to(device),
            LangContext.single(0, 1, self.src_tokens.size(0), device),
        )


def train_batches(n: int, size: Size = SMALL, length: int = 30, seed: int = 0) -> list[Batch]:
    """``n`` batches of ``size.rows`` sentences x ``length`` tokens, EOS-terminated, no padding."""
    g = torch.Generator().manual_seed(seed)
    out = []
    rows = size.rows
    for _ in range(n):
        src = torch.randint(4, size.vocab, (rows, length), generator=g)
        tgt = torch.randint(4, size.vocab, (rows, length), generator=g)
        src[:, -1] = tgt[:, -1] = EOS
        prev = torch.cat([torch.full((rows, 1), EOS), tgt[:, :-1]], 1)
        out.append(Batch(src, prev, tgt, LangContext.single(0, 1, rows)))
    return out


def sources(n: int = 32, vocab: int = SMALL.vocab, seed: int = 1) -> Tensor:
    """``(n, 40)`` right-padded sources of 10-40 tokens, EOS-terminated."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, vocab, (n, 40), generator=g)
    for i, k in enumerate(torch.randint(10, 41, (n,), generator=g).tolist()):
        src[i, k - 1], src[i, k:] = EOS, PAD
    return src


def decoders(project: Transformer, hf: MarianMTModel, src: Tensor, beam: int, length: int) -> dict[str, Callable]:
    """Zero-argument calls that decode ``src`` with each model; both return ``(B, length)`` token ids."""
    langs = LangContext.single(0, 1, src.size(0), src.device)

    def ours() -> Tensor:
        out = beam_search(
            project, src, langs, beam=beam, max_len_a=0.0, max_len_b=length, min_len=length, eos=EOS, pad=PAD
        )
        return torch.tensor(out.tokens)

    def theirs() -> Tensor:
        out = hf.generate(
            input_ids=src,
            attention_mask=src.ne(PAD),
            num_beams=beam,
            do_sample=False,
            min_new_tokens=length,
            max_new_tokens=length + 1,
            length_penalty=1.0,
        )
        return out[:, 1:-1]  # without the start token and the forced EOS

    return {"project": ours, "marian": theirs}


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""``cpu``: the process's CPU time (all its threads): less sensitive than wall-clock time to other processes on a
shared machine, but it counts the time threads spin while waiting for each other."""


def measure(calls: dict[str, Callable], repeats: int, sync: Callable[[], None], clock: str = "wall") -> list[float]:
    """Per repeat ``t_marian / t_project``; the two run back to back, in alternating order."""
    for fn in calls.values():  # warm-up
        fn()
    now = CLOCKS[clock]
    ratios = []
    for r in range(repeats):
        seconds = {}
        for name in ("project", "marian") if r % 2 == 0 else ("marian", "project"):
            sync()
            t = now()
            calls[name]()
            sync()
            seconds[name] = now() - t
        ratios.append(seconds["marian"] / seconds["project"])
    return ratios


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5, help="training steps per repeat")
    ap.add_argument("--length", type=int, default=40, help="generated tokens per sentence")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--only", choices=("train", "greedy", "beam5"), action="append")
    ap.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    ap.add_argument("--tiny", action="store_true", help="32-dimensional 2+2-layer models (the test)")
    args = ap.parse_args(argv)
    size = TINY if args.tiny else SMALL
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    torch.manual_seed(0)
    model = build(ModelConfig, size.model(), "model")
    project = build_transformer(model, vocab_size=size.vocab, num_languages=2, padding_idx=PAD).to(device)
    with device:  # built there (transformers' typed .to() takes no device)
        hf = marian_mt(size)
    n_params = {
        "project": sum(p.numel() for p in project.parameters()),
        "marian": sum(p.numel() for p in hf.parameters()),
    }
    rows: dict[str, list[float]] = {}
    wanted = args.only or ["train", "greedy", "beam5"]
    if "train" in wanted:
        batches = train_batches(args.steps, size)
        models = {"project": project, "marian": MarianSeq2Seq(hf)}
        opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True) for k, m in models.items()}
        rows["train"] = measure(
            {k: (lambda k=k: time_steps(models[k], opts[k], batches, device)) for k in models},
            args.repeats,
            sync,
            args.clock,
        )
    project.eval(), hf.eval()
    src = sources(vocab=size.vocab).to(device)
    with torch.no_grad():
        for name, beam in (("greedy", 1), ("beam5", 5)):
            if name not in wanted:
                continue
            calls = decoders(project, hf, src, beam, args.length)
            shapes = {k: tuple(fn().shape) for k, fn in calls.items()}
            if len(set(shapes.values())) != 1:
                raise RuntimeError(f"{name}: the two decoders generated different lengths: {shapes}")
            rows[name] = measure(calls, args.repeats, sync, args.clock)
    print(
        f"device {device}, {args.threads} threads, {args.repeats} repeats, {args.clock} clock, {size.embed_dim} "
        f"dimensions; params project {n_params['project']:,}, marian {n_params['marian']:,}"
    )
    print(f"{'':8s} {'median':>7s} {'min':>6s} {'max':>6s}   (t_marian / t_project; > 1: the project is faster)")
    for name, ratios in rows.items():
        print(f"{name:8s} {statistics.median(ratios):6.2f}x {min(ratios):5.2f}x {max(ratios):5.2f}x")


if __name__ == "__main__":
    main()
