# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Training throughput at paper scale, per method: tokens/s, TFLOP/s, MFU, and MarianMT's time (not a test).

    python benchmarks/throughput.py [--experiment opus100] [--methods naive lms ...] [--max-tokens 4096]
                                    [--updates 10] [--device cuda] [--precision bf16] [--marian] [--tiny]
                                    [--mfu-tokens 16384] [--deadline 120] [--json FILE]

For each method (default: naive and, for every method kind, the first method of that kind in ``--experiment``'s
``method_cfg``, else in the first paper experiment that defines one, at *that* experiment's model beside its own
naive), the trainer exactly as ``stages.train`` builds it (:func:`lsnmt.train.method.setup_method`, then the
trainer's ``setup``/``wrap``, feed, step and loop) trains on a synthetic corpus shaped like the experiment's (its
vocabulary, languages and training directions; sentence lengths of mean 25 pieces): first a warm-up until two
successive updates agree within 10% (at least 5; ``benchmarks/warmup.py``), then ``--updates`` timed updates of
``--max-tokens`` tokens. Printed per method:

* ms per update and **tokens/s** (source + target tokens, padding excluded, as fairseq's ``wps`` counts words);
* **TFLOP/s**: the floating-point operations of one update counted by ``torch.utils.flop_counter`` (matrix
  multiplies and attention, forward and backward) over the measured time;
* **MFU**: that rate over the rate of a large matrix multiply in the run's precision measured in the same process
  (bf16 8192^3 on a GPU, fp32 1024^3 on a CPU): the share of the machine's dense maths the update uses;
* ``x naive``: the method's time over its experiment's naive time (issue targets: LMS <= 1.08x, LSL <= 1.15x,
  Switch <= 1.6x, CLSR <= 1.3x, FD and LMS+FD <= 2.0x);
* with ``--marian``, Hugging Face MarianMT at ``--experiment``'s naive dimensions (post-norm: MarianMT has no
  pre-norm) on the same batches, bf16 autocast and fused AdamW on a GPU: ``t_marian / t_naive`` (> 1: ours is
  faster);
* with ``--mfu-tokens N``, ``--experiment``'s naive once more at ``N`` tokens per update (its MFU).

Everything runs within ``--deadline`` seconds (default 120: all kinds and MarianMT on one H100), shared out
equally among the timings still to run; a method is timed with as many of ``--updates`` as fit its share after
its warm-up. A method that fails or finds the deadline passed gets its row all the same, the reason in it, and
the table is always printed (``--json``: also written, for ``scripts/gpu_check.py``).

``--tiny`` shrinks every model to 32 dimensions (layers kept, so that layer-indexed methods still build), the
vocabulary to 128 and the batch to 256 tokens (``--mfu-tokens`` to 512): what the default test tier and
``scripts/gpu_check.sh --cpu`` run on a CPU, so that this cannot rot.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from marian_model import marian_update
from torch.utils.flop_counter import FlopCounterMode
from warmup import Deadline, fitting, warm_up

from lsnmt.data.shards import ShardWriter
from lsnmt.experiment.params import Experiment, Params
from lsnmt.io import write_json
from lsnmt.train.curve import Meters
from lsnmt.train.dist import Dist
from lsnmt.train.loop import Job, Update, run_updates
from lsnmt.train.method import setup_method
from lsnmt.train.step import Run, train_step
from lsnmt.train.trainer import setup, wrap
from models.config.kinds import KINDS

PAD, EOS, MEAN_LENGTH = 1, 2, 25
PAPERS = ("opus100", "opus100_clm_enxx", "flores10_lsl", "iwslt14")
"""Where a kind absent from ``--experiment`` is taken from (its first method), in this order."""
MARIAN = "MarianMT"


@dataclass(frozen=True)
class Row:
    """One timing: a method of an experiment at ``max_tokens`` tokens per update (or MarianMT, :data:`MARIAN`)."""

    experiment: str
    method: str
    kind: str
    max_tokens: int
    seconds: float = math.nan
    """Per update."""
    tokens: float = math.nan
    """Real tokens per second."""
    flops: float = math.nan
    """FLOP per second (NaN for MarianMT: not counted)."""
    warmup: int = 0
    settled: bool = False
    timed: int = 0
    error: str = ""
    """Why there is no figure ("" when there is)."""


def pick(params: Params, experiment: str, names: Sequence[str] | None) -> list[tuple[str, str]]:
    """``[(experiment, method)]``: ``names`` in ``experiment``, or naive plus one method per kind (module doc)."""
    if names:
        return [(experiment, n) for n in names]
    chosen = [(experiment, "naive")]
    for kind in KINDS:
        for exp_name in (experiment, *PAPERS):
            cfgs = params.get(exp_name).method_cfg
            found = [m for m, c in cfgs.items() if c.kind == kind and representative(c.entry)]
            if found:
                if (exp_name, "naive") not in chosen:
                    chosen.append((exp_name, "naive"))
                chosen.append((exp_name, found[0]))
                break
    return chosen


def representative(cfg: Mapping[str, Any]) -> bool:
    """A method entry (as params.yaml writes it) that measures its kind: no search to bind, no dense pre-training,
    and for LSL some language-specific layer (not one of the paper's wider dense baselines)."""
    if "architecture" in cfg or "dense_steps" in cfg:
        return False
    return cfg.get("kind") != "lsl" or bool(cfg.get("src") or cfg.get("tgt"))


def shrink(exp: Experiment, max_tokens: int, precision: str, tiny: bool, compile: str = "none") -> Experiment:
    """The experiment's training settings for a benchmark (no validation or saves); ``tiny``: 32 dimensions;
    ``compile``: ``train.compile`` (default ``none``: every method's eager update, so that the methods' ratios to
    naive mean the same everywhere; ``as-set``: the experiment's own, each method then compiling inside the
    deadline; ``benchmarks/host_cost.py --compile`` compares the modes)."""
    train = dataclasses.replace(exp.train, max_tokens=max_tokens, update_freq=1, max_steps=10**6, precision=precision,
                                log_every=10**6, validate_every=10**6, save_every=10**6, gpus_per_node=1, nodes=1)
    if compile != "as-set":
        train = dataclasses.replace(train, compile=compile)  # type: ignore[arg-type]
    model = exp.model
    if tiny:
        model = dataclasses.replace(model, embed_dim=32, ffn_dim=64, heads=2)
    return dataclasses.replace(exp, train=train, model=model)


def write_corpus(root: Path, exp: Experiment, vocab: int, sentences: int, seed: int = 0) -> Path:
    """Shards of every training direction of ``exp`` (``sentences`` pairs spread over them) and a few validation
    pairs, random ids, lengths geometric of mean :data:`MEAN_LENGTH` (at most 200, and within the limits)."""
    rng = np.random.default_rng(seed)
    pairs = exp.data.train_pairs
    cfg = exp.train
    longest = min(200, cfg.max_source_positions - 1, cfg.max_target_positions - 1, cfg.max_tokens - 1)
    per = max(4, sentences // len(pairs))
    for split, n in (("train", per), ("valid", 2)):
        (root / split).mkdir(parents=True, exist_ok=True)
        for s, t in pairs:
            for side in ("src", "tgt"):
                lengths = np.minimum(rng.geometric(1 / MEAN_LENGTH, n), longest)
                w = ShardWriter(root / split / f"{s}-{t}.{side}", vocab)
                w.add_many([rng.integers(4, vocab, k).tolist() for k in lengths])
                w.close()
    write_json(root / "meta.json", {"vocab_size": vocab, "bos": 0, "pad": PAD, "eos": EOS, "unk": 3,
                                    "languages": list(exp.data.languages), "shards": {}})
    return root


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def matmul_peak(device: torch.device, dtype: torch.dtype) -> float:
    """FLOP/s of a large square matrix multiply in ``dtype`` (the MFU's denominator)."""
    n = 8192 if device.type == "cuda" else 1024
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    a @ b  # warm-up
    reps = 20 if device.type == "cuda" else 3
    _sync(device)
    start = time.perf_counter()
    for _ in range(reps):
        a @ b
    _sync(device)
    return 2 * n**3 * reps / (time.perf_counter() - start)


def timed_updates(run: Run, n: int) -> tuple[float, int]:
    """Seconds for ``n`` updates through the trainer's loop (one check, after the last), and their real (non-pad)
    source and target tokens (counted on the host tensors before they move)."""
    tokens = [0]

    def update(_k: int) -> Update:
        step = run.feed.next()
        tokens[0] += sum(int(s.src_tokens.ne(PAD).sum()) + int(s.target.ne(PAD).sum()) for s in step.samples)
        return train_step(run, step)

    job = Job(name="bench", total=run.step + n, log_every=10**9, save_every=10**9, update=update,
              save=lambda _k, **_kw: None)
    _sync(run.dist.device)
    start = time.perf_counter()
    run_updates(job, run.step, Meters())
    _sync(run.dist.device)
    return time.perf_counter() - start, tokens[0]


def measure(exp: Experiment, method: str, bin_dir: Path, device: torch.device, updates: int, budget: float) -> Row:
    """One method within ``budget`` seconds: warm-up (half of what is left after the set-up, at least 5 updates),
    the FLOPs of one update, then as many of ``updates`` timed updates as fit the rest."""
    end = time.perf_counter() + budget
    m = setup_method(exp, exp.name, method)
    torch.manual_seed(1)
    run, _ = setup(m.spec, bin_dir, Dist(0, 1, device, False), m.factory, m.criterion)
    wrap(run, m.criterion)
    try:
        w = warm_up(lambda: timed_updates(run, 1)[0], (end - time.perf_counter()) / 2)
        step = run.feed.next()
        with FlopCounterMode(display=False) as counter:
            train_step(run, step)
        flops = counter.get_total_flops()  # of one update: the mean update's, about (same token budget)
        n = fitting(updates, w.last, end - time.perf_counter())
        seconds, tokens = timed_updates(run, n)
    finally:
        run.feed.close()
    return Row(exp.name, method, m.kind or "naive", exp.train.max_tokens, seconds / n, tokens / seconds,
               flops * n / seconds, w.updates, w.settled, n)


def marian(exp: Experiment, bin_dir: Path, device: torch.device, updates: int, budget: float) -> Row:
    """MarianMT at ``exp``'s naive dimensions on the trainer's batches, warmed up and timed as :func:`measure`."""
    end = time.perf_counter() + budget
    m = setup_method(exp, exp.name, "naive")
    run, _ = setup(m.spec, bin_dir, Dist(0, 1, device, False), m.factory, None)
    vocab, steps = run.vocab.size, [run.feed.next() for _ in range(8)]
    run.feed.close()
    del run
    update = marian_update(exp, vocab, device, PAD, EOS)
    turn = iter(range(10**9))

    def timed(n: int) -> float:
        _sync(device)
        start = time.perf_counter()
        for _ in range(n):
            update(steps[next(turn) % len(steps)])
        _sync(device)
        return time.perf_counter() - start

    w = warm_up(lambda: timed(1), (end - time.perf_counter()) / 2)
    n = fitting(updates, w.last, end - time.perf_counter())
    seconds = timed(n)
    real = sum(int(s.src_tokens.ne(PAD).sum()) + int(s.target.ne(PAD).sum()) for st in steps for s in st.samples)
    return Row(exp.name, MARIAN, "naive's dims", exp.train.max_tokens, seconds / n, real / len(steps) * n / seconds,
               math.nan, w.updates, w.settled, n)


def naive_times(rows: Sequence[Row]) -> dict[tuple[str, int], float]:
    """``(experiment, max_tokens) -> naive's seconds per update`` (the ratios' denominators)."""
    return {(r.experiment, r.max_tokens): r.seconds for r in rows if r.method == "naive" and not r.error}


def ratio(row: Row, naive: dict[tuple[str, int], float]) -> float:
    """``row``'s time over its experiment's naive time at the same tokens per update (NaN without both)."""
    return row.seconds / naive.get((row.experiment, row.max_tokens), math.nan)


def table(rows: Sequence[Row], peak: float) -> str:
    naive = naive_times(rows)
    lines = ["| experiment | method | kind | tokens/update | ms/update | tokens/s | TFLOP/s | MFU | x naive "
             "| warm-up |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        head = f"| {r.experiment} | {r.method} | {r.kind} | {r.max_tokens:,} |"
        if r.error:
            lines.append(f"{head} | | | | | {r.error} |")
            continue
        x = ratio(r, naive)
        x_text = (f"t_marian / t_naive = {1 / x:.2f}x" if r.method == MARIAN else f"{x:.2f}x") if x == x else ""
        mfu = f"{r.flops / 1e12:.3f} | {r.flops / peak:.1%}" if r.flops == r.flops else " | "
        settled = "settled" if r.settled else "not settled"
        lines.append(f"{head} {r.seconds * 1e3:.1f} | {r.tokens:,.0f} | {mfu} | {x_text} | {r.warmup} ({settled}), "
                     f"{r.timed} timed |")
    return "\n".join(lines)


def timings(args: argparse.Namespace, params: Params) -> list[tuple[str, str, int]]:
    """``[(experiment, method, max_tokens)]`` in the order they are timed, MarianMT among them (``--marian``)."""
    max_tokens = 256 if args.tiny else args.max_tokens
    chosen = [(e, m, max_tokens) for e, m in pick(params, args.experiment, args.methods)]
    if args.marian:
        chosen.insert(1, (args.experiment, MARIAN, max_tokens))
    if args.mfu_tokens:
        chosen.append((args.experiment, "naive", mfu_tokens(args)))
    return chosen


def mfu_tokens(args: argparse.Namespace) -> int:
    """Tokens per update of the extra naive timing (``--mfu-tokens``; 512 with ``--tiny``; 0: none)."""
    return (512 if args.tiny else args.mfu_tokens) if args.mfu_tokens else 0


def one(item: tuple[str, str, int], args: argparse.Namespace, params: Params, bin_dir: Path, budget: float) -> Row:
    """Time one item of :func:`timings` within ``budget`` seconds; a failure or a passed deadline is its row."""
    exp_name, method, max_tokens = item
    exp = shrink(params.get(exp_name), max_tokens, args.precision, args.tiny, args.compile)
    kind = "naive's dims" if method == MARIAN else ""
    if budget <= 0:
        return Row(exp_name, method, kind, max_tokens, error=f"not timed: the {args.deadline:.0f} s deadline passed")
    device = torch.device(args.device)
    try:
        if method == MARIAN:
            return marian(exp, bin_dir, device, args.updates, budget)
        return measure(exp, method, bin_dir, device, args.updates, budget)
    except Exception as e:  # the row says why; the other methods still run and the table prints
        if device.type == "cuda":
            torch.cuda.empty_cache()
        return Row(exp_name, method, kind, max_tokens, error=f"failed: {type(e).__name__}: {e}"[:300])


def run(args: argparse.Namespace, say: Callable[[str], None] = print) -> list[Row]:
    device = torch.device(args.device)
    params = Params.load(ROOT / "params.yaml")
    items = timings(args, params)
    deadline = Deadline(args.deadline, len(items))
    rows: list[Row] = []
    for exp_name in dict.fromkeys(e for e, _, _ in items):
        exp = shrink(params.get(exp_name), max(t for e, _, t in items if e == exp_name), args.precision, args.tiny,
                     args.compile)
        vocab = 128 if args.tiny else exp.spm.vocab_size
        with tempfile.TemporaryDirectory() as tmp:
            bin_dir = write_corpus(Path(tmp), exp, vocab, exp.train.max_tokens // (2 * MEAN_LENGTH) * 64)
            for item in (i for i in items if i[0] == exp_name):
                rows.append(one(item, args, params, bin_dir, deadline.share()))
                r = rows[-1]
                say(f"{exp_name} {r.method} @{r.max_tokens}: " + (r.error or f"{r.seconds * 1e3:.1f} ms per update"))
    dtype = torch.bfloat16 if device.type == "cuda" and args.precision == "bf16" else torch.float32
    peak = matmul_peak(device, dtype)
    over = -deadline.remaining()
    say(f"{device.type}, {torch.get_num_threads()} threads, {args.precision if device.type == 'cuda' else 'fp32'}, "
        f"up to {args.updates} timed updates per method after its warm-up, {args.deadline:.0f} s deadline"
        + (f" ({over:.0f} s over)" if over > 0 else "") + f"; matmul peak {peak / 1e12:.2f} TFLOP/s ({dtype})")
    say(table(rows, peak))
    if args.json:
        write_json(args.json, {"device": device.type, "precision": args.precision, "peak_flops": peak,
                               "experiment": args.experiment, "mfu_tokens": mfu_tokens(args),
                               "rows": [dataclasses.asdict(r) for r in rows]})
    return rows


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--experiment", default="opus100")
    ap.add_argument("--methods", nargs="*", help="methods of --experiment (default: naive and one per kind)")
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--updates", type=int, default=10, help="timed updates per method (at most; as fit)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--precision", default="bf16", choices=("fp32", "bf16"), help="autocast dtype on a GPU")
    ap.add_argument("--marian", action="store_true", help="also time MarianMT at --experiment's naive dimensions")
    ap.add_argument("--mfu-tokens", type=int, default=0, help="also time --experiment's naive at this many tokens")
    ap.add_argument("--deadline", type=float, default=120.0, help="seconds for every timing together")
    ap.add_argument("--tiny", action="store_true", help="32-dimensional models, 256 tokens (the CPU test)")
    ap.add_argument("--compile", default="none", choices=("none", "as-set", "default", "reduce-overhead", "cudagraphs"),
                    help="train.compile of every method (default: none, eager updates)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> list[Row]:
    args = parse(argv)
    torch.set_num_threads(args.threads)
    return run(args)


if __name__ == "__main__":
    main()
