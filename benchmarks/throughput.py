# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Training throughput at paper scale, per method: tokens/s, TFLOP/s, MFU, and MarianMT's time (not a test).

    python benchmarks/throughput.py [--experiment opus100] [--methods naive lms ...] [--max-tokens 4096]
                                    [--updates 10] [--device cuda] [--precision bf16] [--marian] [--tiny]

For each method (default: naive and, for every method kind, the first method of that kind in ``--experiment``'s
``method_cfg``, else in the first paper experiment that defines one, at *that* experiment's model beside its own
naive), the trainer exactly as ``stages.train`` builds it (:func:`lsnmt.train.method.setup_method`, then the
trainer's ``setup``/``wrap``, feed, step and loop) trains ``--updates`` updates of ``--max-tokens`` tokens on a
synthetic corpus shaped like the experiment's (its vocabulary, languages and training directions; sentence lengths
of mean 25 pieces). Printed per method:

* ms per update and **tokens/s** (source + target tokens, padding excluded, as fairseq's ``wps`` counts words);
* **TFLOP/s**: the floating-point operations of one update counted by ``torch.utils.flop_counter`` (matrix
  multiplies and attention, forward and backward) over the measured time;
* **MFU**: that rate over the rate of a large matrix multiply in the run's precision measured in the same process
  (bf16 8192^3 on a GPU, fp32 1024^3 on a CPU): the share of the machine's dense maths the update uses;
* ``x naive``: the method's time over its experiment's naive time (issue targets: LMS <= 1.08x, LSL <= 1.15x,
  Switch <= 1.6x, CLSR <= 1.3x, FD and LMS+FD <= 2.0x);
* with ``--marian``, Hugging Face MarianMT at the naive model's dimensions (post-norm: MarianMT has no pre-norm)
  on the same batches, bf16 autocast and fused AdamW on a GPU: ``t_marian / t_naive`` (> 1: the project is faster).

``--tiny`` shrinks every model to 32 dimensions (layers kept, so that layer-indexed methods still build), the
vocabulary to 128 and the batch to 256 tokens: what the default test tier runs on a CPU, so that this cannot rot.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from torch.utils.flop_counter import FlopCounterMode

from lsnmt.config import Experiment, Params
from lsnmt.data.shards import ShardWriter
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


@dataclass(frozen=True)
class Row:
    experiment: str
    method: str
    kind: str
    seconds: float
    tokens: float
    flops: float


def pick(params: Params, experiment: str, names: Sequence[str] | None) -> list[tuple[str, str]]:
    """``[(experiment, method)]``: ``names`` in ``experiment``, or naive plus one method per kind (module doc)."""
    if names:
        return [(experiment, n) for n in names]
    chosen = [(experiment, "naive")]
    for kind in KINDS:
        for exp_name in (experiment, *PAPERS):
            cfgs = params.get(exp_name).method_cfg
            found = [m for m, c in cfgs.items() if c.get("kind") == kind and representative(c)]
            if found:
                if (exp_name, "naive") not in chosen:
                    chosen.append((exp_name, "naive"))
                chosen.append((exp_name, found[0]))
                break
    return chosen


def representative(cfg: dict) -> bool:
    """A method entry that measures its kind: no search to bind, no dense pre-training, and for LSL some
    language-specific layer (not one of the paper's wider dense baselines)."""
    if "architecture" in cfg or "dense_steps" in cfg:
        return False
    return cfg.get("kind") != "lsl" or bool(cfg.get("src") or cfg.get("tgt"))


def shrink(exp: Experiment, max_tokens: int, updates: int, precision: str, tiny: bool) -> Experiment:
    """The experiment's training settings for a benchmark (no validation or saves); ``tiny``: 32 dimensions."""
    train = dataclasses.replace(exp.train, max_tokens=max_tokens, update_freq=1, max_steps=10**6, precision=precision,
                                log_every=10**6, validate_every=10**6, save_every=10**6, gpus_per_node=1, nodes=1)
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


def measure(exp: Experiment, method: str, bin_dir: Path, device: torch.device, updates: int, warmup: int = 2) -> Row:
    """One method: ``warmup`` updates, the FLOPs of one update, then ``updates`` timed updates."""
    m = setup_method(exp, method)
    torch.manual_seed(1)
    run, _ = setup(m.exp, bin_dir, Dist(0, 1, device, False), m.factory, m.criterion)
    wrap(run, m.criterion)
    try:
        timed_updates(run, warmup)
        step = run.feed.next()
        with FlopCounterMode(display=False) as counter:
            train_step(run, step)
        flops = counter.get_total_flops()  # of one update: the mean update's, about (same token budget)
        seconds, tokens = timed_updates(run, updates)
    finally:
        run.feed.close()
    return Row(exp.name, method, m.kind or "naive", seconds / updates, tokens / seconds, flops * updates / seconds)


def marian_seconds(exp: Experiment, bin_dir: Path, device: torch.device, updates: int) -> float:
    """MarianMT at ``exp``'s model dimensions on the trainer's batches: seconds per update."""
    from transformers import MarianConfig, MarianMTModel

    m = setup_method(exp, "naive")
    run, _ = setup(m.exp, bin_dir, Dist(0, 1, device, False), m.factory, None)
    vocab, dims = run.vocab.size, exp.model
    steps = [run.feed.next() for _ in range(updates + 2)]
    run.feed.close()
    del run
    layers = dict(encoder_layers=dims.encoder_layers, decoder_layers=dims.decoder_layers)
    cfg = MarianConfig(vocab_size=vocab, decoder_vocab_size=vocab, d_model=dims.embed_dim, **layers,
                       encoder_attention_heads=dims.heads, decoder_attention_heads=dims.heads,
                       encoder_ffn_dim=dims.ffn_dim, decoder_ffn_dim=dims.ffn_dim, activation_function="relu",
                       dropout=dims.dropout, attention_dropout=0.0, activation_dropout=0.0,
                       max_position_embeddings=1024, scale_embedding=True, pad_token_id=PAD, eos_token_id=EOS,
                       decoder_start_token_id=EOS, share_encoder_decoder_embeddings=True, tie_word_embeddings=True)
    model = MarianMTModel(cfg).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    amp = exp.train.precision if device.type == "cuda" else "fp32"

    def update(step) -> None:  # type: ignore[no-untyped-def]
        for s in step.samples:
            s = s.to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp == "bf16"):
                logits = model(input_ids=s.src_tokens, attention_mask=s.src_tokens.ne(PAD),
                               decoder_input_ids=s.prev_output_tokens).logits
                loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab).float(), s.target.reshape(-1),
                                                         ignore_index=PAD, label_smoothing=0.1, reduction="sum")
            (loss / step.ntokens).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for step in steps[:2]:
        update(step)
    _sync(device)
    start = time.perf_counter()
    for step in steps[2:]:
        update(step)
    _sync(device)
    return (time.perf_counter() - start) / updates


def table(rows: list[Row], peak: float, marian: dict[str, float]) -> str:
    naive = {r.experiment: r.seconds for r in rows if r.method == "naive"}
    lines = ["| experiment | method | kind | ms/update | tokens/s | TFLOP/s | MFU | x naive |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ratio = r.seconds / naive[r.experiment] if r.experiment in naive else math.nan
        lines.append(f"| {r.experiment} | {r.method} | {r.kind} | {r.seconds * 1e3:.1f} | {r.tokens:,.0f} | "
                     f"{r.flops / 1e12:.3f} | {r.flops / peak:.1%} | {ratio:.2f}x |")
    for exp_name, seconds in marian.items():
        lines.append(f"| {exp_name} | MarianMT | naive's dims | {seconds * 1e3:.1f} | | | | "
                     f"t_marian / t_naive = {seconds / naive[exp_name]:.2f}x |")
    return "\n".join(lines)


def run(args: argparse.Namespace, say: Callable[[str], None] = print) -> list[Row]:
    device = torch.device(args.device)
    params = Params.load(ROOT / "params.yaml")
    chosen = pick(params, args.experiment, args.methods)
    max_tokens = 256 if args.tiny else args.max_tokens
    rows, marian = [], {}
    for exp_name in dict.fromkeys(e for e, _ in chosen):
        exp = shrink(params.get(exp_name), max_tokens, args.updates, args.precision, args.tiny)
        vocab = 128 if args.tiny else exp.spm.vocab_size
        with tempfile.TemporaryDirectory() as tmp:
            bin_dir = write_corpus(Path(tmp), exp, vocab, max_tokens // (2 * MEAN_LENGTH) * (args.updates + 6) * 2)
            for e, method in chosen:
                if e == exp_name:
                    rows.append(measure(exp, method, bin_dir, device, args.updates, 1 if args.tiny else 2))
                    say(f"{exp_name} {method}: {rows[-1].seconds * 1e3:.1f} ms per update")
            if args.marian:
                marian[exp_name] = marian_seconds(exp, bin_dir, device, args.updates)
    dtype = torch.bfloat16 if device.type == "cuda" and args.precision == "bf16" else torch.float32
    peak = matmul_peak(device, dtype)
    say(f"{device.type}, {torch.get_num_threads()} threads, {args.precision if device.type == 'cuda' else 'fp32'}, "
        f"{max_tokens} tokens per update, {args.updates} updates per method; matmul peak {peak / 1e12:.2f} TFLOP/s "
        f"({dtype})")
    say(table(rows, peak, marian))
    return rows


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiment", default="opus100")
    ap.add_argument("--methods", nargs="*", help="methods of --experiment (default: naive and one per kind)")
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--updates", type=int, default=10)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--precision", default="bf16", choices=("fp32", "bf16"), help="autocast dtype on a GPU")
    ap.add_argument("--marian", action="store_true", help="also time MarianMT at the naive models' dimensions")
    ap.add_argument("--tiny", action="store_true", help="32-dimensional models, 256 tokens (the CPU test)")
    ap.add_argument("--threads", type=int, default=2)
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> list[Row]:
    args = parse(argv)
    torch.set_num_threads(args.threads)
    return run(args)


if __name__ == "__main__":
    main()
