# ruff: noqa: E402  (imports follow the sys.path set-up)
"""The translation trainer's host cost per update (not a test): what the GPU waits for when the maths is small.

    python benchmarks/host_cost.py [--models floor default_gpu] [--updates 40] [--repeats 3] [--max-tokens N]
                                   [--device cpu] [--precision fp32] [--tiny] [--profile] [--json FILE]

``default_gpu``'s batches (8,192 tokens per update, mixed directions: 16 English-centric directions of 9 languages,
sentence lengths like the embedded Tatoeba data's) through the real feed, step and loop (``setup``, ``wrap``,
:func:`lsnmt.train.loop.run_updates` with the trainer's step), on two models:

* ``floor``: so small that its maths is negligible (8 dimensions, 1+1 layers, a vocabulary of 128);
* ``default_gpu``: that experiment's real model (256 dimensions, 3+3 layers, its 8,000-piece vocabulary, its
  training settings; ``train.compile`` as params.yaml sets it). ``--tiny`` shrinks it to 16 dimensions and a
  vocabulary of 128 (layers and settings kept): what ``scripts/gpu_check.sh --cpu`` runs.

Printed per model, after a warm-up until two successive updates agree within 10% (``benchmarks/warmup.py``):

* **updates/s** of the trainer, and of a **bare loop** over the same model and batches (collated and moved
  beforehand: forward, the same loss, backward, the same fused AdamW): the floor of framework dispatch. Their
  ratio is the trainer's overhead (``t_trainer / t_bare``, 1.0 is no overhead); a ratio, so compare it across
  machines, not the absolute rates;
* **operations per update**: the ATen operations one eager update dispatches (:func:`lsnmt.train.ops.update_ops`,
  counted on the CPU in fp32: the count does not depend on the machine), and those of them that compute (a kernel
  launch each on a GPU): on a GPU, updates/s times this is the host's dispatch rate;
* **Python calls per update** of the trainer and of the bare loop (cProfile's count of Python and built-in
  function calls over a few updates): the interpreter's share of the host's work, machine-independent like the
  operation count. The bare loop's are the model's, the loss's and the optimizer's; what the trainer adds beyond them
  is its own per-update cost (2026-11-28, ``default_gpu --tiny``: 9,379 vs 2,609 before the update stopped walking
  the model's modules to set training mode and list its parameters and seeding every backend, 2,974 after);
* **where the time goes**: the feed's cost of building one update's batches (on its background thread: it
  competes with the training thread for the GIL); with ``--profile``, the main thread's largest functions by own
  time (cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import functools
import io
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from warmup import warm_up

from lsnmt.data.shards import ShardWriter
from lsnmt.experiment.params import Experiment, Params
from lsnmt.io import write_json
from lsnmt.train.batching import BatchStream
from lsnmt.train.curve import Meters
from lsnmt.train.dist import Dist
from lsnmt.train.feed import Feed
from lsnmt.train.loop import Job, run_updates
from lsnmt.train.loss import smoothed_cross_entropy
from lsnmt.train.ops import mixed_batch, update_ops
from lsnmt.train.step import Run, train_step
from lsnmt.train.trainer import setup, wrap
from lsnmt.typed import build
from models.build import build_transformer

LANGUAGES = ("en", "de", "fr", "ru", "tr", "he", "hi", "vi", "sw")
PAD, EOS = 1, 2
CLOCK = [time.perf_counter]
"""The clock the updates are timed with: wall (``perf_counter``), or the training thread's CPU time (``--clock
thread``: steadier on a shared machine; it leaves out the feed thread, which ``feed`` reports)."""
MEAN_LENGTH = 12
"""Mean sentence length in sentencepiece pieces (the embedded Tatoeba pairs with default_gpu's 8,000 pieces: ~12)."""
MODELS = ("floor", "default_gpu")


def write_corpus(root: Path, per_direction: int, languages: tuple[str, ...], vocab: int, seed: int = 0) -> Path:
    """An encoded corpus of the English-centric directions: ``per_direction`` pairs each, lengths drawn from a
    shifted geometric distribution of mean :data:`MEAN_LENGTH` (at most 60), ids uniform over the vocabulary."""
    rng = np.random.default_rng(seed)
    for split, n in (("train", per_direction), ("valid", 4)):
        (root / split).mkdir(parents=True, exist_ok=True)
        for other in languages[1:]:
            for name in (f"{languages[0]}-{other}", f"{other}-{languages[0]}"):
                for side in ("src", "tgt"):
                    lengths = np.minimum(rng.geometric(1 / (MEAN_LENGTH - 2), n) + 2, 60)
                    w = ShardWriter(root / split / f"{name}.{side}", vocab)
                    w.add_many([rng.integers(4, vocab, k).tolist() for k in lengths])
                    w.close()
    write_json(root / "meta.json", {"vocab_size": vocab, "bos": 0, "pad": PAD, "eos": EOS, "unk": 3,
                                    "languages": list(languages), "shards": {}})
    return root


def floor_experiment(max_tokens: int, precision: str) -> tuple[Experiment, int]:
    """default_gpu's training settings (mixed batches, pre-norm) on an 8-dimensional 1+1-layer model; its vocabulary
    size (128)."""
    data = {"languages": list(LANGUAGES), "train_directions": "en-centric", "eval_directions": "en-centric",
            "sources": [{"name": "bitext", "kind": "embedded", "splits": ["train"]},
                        {"name": "mw", "kind": "embedded", "splits": ["valid", "test"]}]}
    model = {"arch": "transformer_small", "embed_dim": 8, "ffn_dim": 16, "heads": 2, "encoder_layers": 1,
             "decoder_layers": 1, "dropout": 0.2, "normalize_before": True}
    train = {"max_tokens": max_tokens, "max_steps": 10**6, "lr": 0.002, "warmup_steps": 500, "label_smoothing": 0.1,
             "batching": "mixed", "precision": precision, "log_every": 10**6, "validate_every": 10**6,
             "save_every": 10**6}
    return build(Experiment, {"name": "floor", "data": data, "model": model, "train": train}, ""), 128


def real_experiment(max_tokens: int | None, precision: str, tiny: bool,
                    compile: str = "as-set") -> tuple[Experiment, int]:
    """default_gpu as params.yaml sets it (no validation or saves; ``max_tokens``, ``precision`` and
    ``train.compile`` as asked: ``as-set`` keeps it); its vocabulary size. ``tiny``: 16 dimensions and a vocabulary
    of 128, layers and settings kept."""
    exp = Params.load(ROOT / "params.yaml").get("default_gpu")
    train = dataclasses.replace(exp.train, max_tokens=max_tokens or exp.train.max_tokens, max_steps=10**6,
                                precision=precision, log_every=10**6, validate_every=10**6, save_every=10**6,
                                update_freq=1, gpus_per_node=1, nodes=1)
    if compile != "as-set":
        train = dataclasses.replace(train, compile=compile)  # type: ignore[arg-type]
    model = dataclasses.replace(exp.model, embed_dim=16, ffn_dim=32, heads=2) if tiny else exp.model
    return dataclasses.replace(exp, train=train, model=model), 128 if tiny else exp.spm.vocab_size


def trainer(bin_dir: Path, exp: Experiment, device: torch.device) -> tuple[Run, Callable[[int], float]]:
    """The trainer's run (``stages.train``'s set-up) and ``updates(n) -> seconds`` through its loop."""
    run, _ = setup(exp, bin_dir, Dist(0, 1, device, False), build_transformer, None)
    wrap(run, None)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def updates(n: int) -> float:
        job = Job(name="bench", total=run.step + n, log_every=n, save_every=10**9,
                  update=lambda _k: train_step(run, run.feed.next()), save=lambda _k, **_kw: None)
        sync()
        start = CLOCK[0]()
        run_updates(job, run.step, Meters())
        sync()
        return CLOCK[0]() - start

    return run, updates


def bare(run: Run, n: int) -> Callable[[int], float]:
    """The same model's forward, loss, backward and optimizer step on ``n`` batches collated and moved beforehand."""
    samples = [s.to(run.dist.device) for step in (run.feed.next() for _ in range(n)) for s in step.samples]
    model, opt, pad = run.model, run.optimizer, run.vocab.pad
    sync = torch.cuda.synchronize if run.dist.device.type == "cuda" else (lambda: None)

    def updates(k: int) -> float:
        sync()
        start = CLOCK[0]()
        for s in samples[:k]:
            with torch.autocast("cuda", dtype=run.amp_dtype) if run.amp_dtype else torch.autocast("cpu", enabled=False):
                logits = model(s.src_tokens, s.prev_output_tokens, s.langs)
                loss, _ = smoothed_cross_entropy(logits, s.target, 0.1, pad)
            opt.zero_grad(set_to_none=True)
            (loss / s.ntokens).backward()
            opt.step()
        sync()
        return CLOCK[0]() - start

    return updates


def feed_cost(run: Run, n: int) -> float:
    """Seconds to build one update's batches on the calling thread (what the prefetch thread does), with a feed of
    its own over the same pool."""
    own = run.feed.stream
    feed = Feed(BatchStream(own.pool, own.cfg, own.seed), run.feed.dirs, run.vocab, run.dist, run.cfg.update_freq,
                depth=0)
    start = time.perf_counter()
    for _ in range(n):
        feed.next()
    return (time.perf_counter() - start) / n


def profiled(updates: Callable[[int], float], n: int) -> pstats.Stats:
    """cProfile's statistics of ``n`` updates."""
    prof = cProfile.Profile()
    prof.enable()
    updates(n)
    prof.disable()
    return pstats.Stats(prof)


def python_calls(updates: Callable[[int], float], n: int) -> float:
    """Python function calls (cProfile's count, built-ins included) per update over ``n`` updates."""
    return profiled(updates, n).total_calls / n  # type: ignore[attr-defined]  # typeshed omits total_calls


def profile(updates: Callable[[int], float], n: int, top: int = 15) -> str:
    """The ``top`` functions of ``n`` updates by own time."""
    stats, out = profiled(updates, n), io.StringIO()
    stats.stream = out
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def bench(exp: Experiment, vocab: int, args: argparse.Namespace) -> dict[str, float]:
    """One model: seconds per update of ``trainer`` and ``bare`` (medians), the feed's ``feed`` seconds per update,
    ``ops`` and ``kernels`` per eager update, ``trainer_calls`` and ``bare_calls`` (Python calls per update),
    ``warmup`` updates (and ``settled``: 1 or 0)."""
    device = torch.device(args.device)
    tokens = exp.train.max_tokens
    with tempfile.TemporaryDirectory() as tmp:
        sentences = tokens // MEAN_LENGTH * args.updates * (args.repeats + 2) // 16 + 100
        bin_dir = write_corpus(Path(tmp), sentences, tuple(exp.data.languages), vocab)
        run, ours = trainer(bin_dir, exp, device)
        floor = bare(run, args.updates)
        w = warm_up(lambda: ours(1), args.warmup_seconds)
        warm_up(lambda: floor(1), args.warmup_seconds)
        rows: dict[str, list[float]] = {"trainer": [], "bare": []}
        for r in range(args.repeats):
            for name, fn in (("trainer", ours), ("bare", floor))[:: 1 if r % 2 == 0 else -1]:
                rows[name].append(fn(args.updates) / args.updates)
        feed = feed_cost(run, 10)
        calls = {"trainer_calls": python_calls(ours, args.updates), "bare_calls": python_calls(floor, args.updates)}
        shapes = sorted({tuple(s.target.shape) for s in run.feed.next().samples})
        profiled = profile(ours, args.updates) if args.profile else ""
        run.feed.close()
    ops = update_ops(exp, "naive", vocab_size=vocab, sample=mixed_batch(exp, vocab, max_tokens=tokens))
    t, b = statistics.median(rows["trainer"]), statistics.median(rows["bare"])
    ratios = [x / y for x, y in zip(rows["trainer"], rows["bare"], strict=True)]
    print(f"{exp.name}: {device.type}, {torch.get_num_threads()} threads, {args.clock} clock, {tokens} tokens per "
          f"update (mixed directions, e.g. {shapes}), warm-up {w.updates} updates "
          f"({'settled' if w.settled else 'not settled'}), {args.repeats} x {args.updates} updates")
    print(f"  t_trainer / t_bare: median {statistics.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f}x;"
          f" feed (background thread) {feed * 1e3:.1f} ms per update to collate its batches")
    print(f"  operations per eager update: {ops.report(8)}")
    print(f"  Python calls per update: trainer {calls['trainer_calls']:,.0f}, bare loop {calls['bare_calls']:,.0f} "
          f"({calls['trainer_calls'] / calls['bare_calls']:.2f}x)")
    if profiled:
        print(profiled)
    return {"trainer": t, "bare": b, "feed": feed, "ops": ops.total, "kernels": ops.kernels, "warmup": w.updates,
            "settled": float(w.settled), **calls}


def table(results: dict[str, dict[str, float]]) -> str:
    lines = ["| model | trainer updates/s | bare loop updates/s | t_trainer / t_bare | ops per update (computing) |",
             "| --- | --- | --- | --- | --- |"]
    for name, r in results.items():
        lines.append(f"| {name} | {1 / r['trainer']:.1f} | {1 / r['bare']:.1f} | {r['trainer'] / r['bare']:.2f}x | "
                     f"{r['ops']:,.0f} ({r['kernels']:,.0f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    """Run the benchmark (module docstring); returns per model the figures of :func:`bench`."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    ap.add_argument("--updates", type=int, default=40, help="updates per repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, help="tokens per update (default: default_gpu's, 8,192)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--precision", default="fp32", choices=("fp32", "bf16"), help="bf16: autocast on CUDA only")
    ap.add_argument("--tiny", action="store_true", help="default_gpu's model at 16 dimensions, vocabulary 128")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup-seconds", type=float, default=30.0, help="at most, per model and loop (5 updates min)")
    ap.add_argument("--profile", action="store_true", help="also print cProfile's largest functions")
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall",
                    help="time updates on the wall clock or the training thread's CPU clock")
    ap.add_argument("--compile", nargs="+", default=["as-set"],
                    choices=("as-set", "none", "default", "reduce-overhead", "cudagraphs"),
                    help="default_gpu's train.compile, one row each (default: as params.yaml sets it)")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    CLOCK[0] = time.perf_counter if args.clock == "wall" else time.thread_time
    made = {"floor": lambda: floor_experiment(args.max_tokens or 8192, args.precision)}
    for mode in args.compile:  # one row per train.compile mode of default_gpu, in one run: their ratio means
        name = "default_gpu" if mode == "as-set" else f"default_gpu (compile {mode})"
        made[name] = functools.partial(real_experiment, args.max_tokens, args.precision, args.tiny, mode)
    names = [n for n in made if ("floor" if n == "floor" else "default_gpu") in args.models]
    results = {name: bench(*made[name](), args) for name in names}
    print(table(results))
    if args.json:
        write_json(args.json, {"device": args.device, "precision": args.precision, "tiny": args.tiny,
                               "models": results})
    return results


if __name__ == "__main__":
    main()
