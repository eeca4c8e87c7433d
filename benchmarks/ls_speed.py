# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Training-update time of every language-specific method relative to naive's, against the targets of the issue
"Language-specific methods at the GPU's speed", and beam-5 decoding speed of every route (not a test).

    .venv/bin/python benchmarks/ls_speed.py [--arch transformer_small] [--tokens 1024] [--batching mixed]
        [--steps 3] [--rounds 5] [--only lsl --only switch] [--clock wall] [--threads 2] [--device cpu]
        [--precision bf16] [--profile sclm-k194] [--flops] [--tiny]
    .venv/bin/python benchmarks/ls_speed.py --tiny --tokens 64 --steps 1 --rounds 1 --decode-steps 2   # the test

The issue's setting, on a GPU: ``--arch transformer_big --tokens 4096 --precision bf16``.

Methods, with the settings of params.yaml (read from it, so the benchmark follows the experiments): LMS (d=64,
pair-wise), LMS+FD (d=64, two passes), Switch (16 experts every 2nd layer) and CLSR (self + ffn, p=0.3) of
``experiments.opus100.method_cfg``; FD of ``experiments.iwslt14`` (OPUS-100 has none); LSL with a source-indexed
layer 1 and a target-indexed layer 2 (the layout the default_gpu search selects); sCLM (k=194) and mCLM (k=134) of
``experiments.opus100_clm_enxx``. All on ``--arch`` (default ``transformer_small``, 512/1024, 6+6: the paper's
``transformer_big`` at 4,096 tokens takes minutes per update on a CPU) with 9 languages and an 8K vocabulary.

One training update is the method's criterion (two passes for FD and LMS+FD), its auxiliary loss, the backward
and an AdamW step, on one batch of about ``--tokens`` target tokens: ``--batching mixed`` (default; default_gpu's
batching, and Switch's in every experiment) spreads the rows over the 16 English-centric directions of the 9
languages, ``direction`` gives every row one direction. Rounds alternate between the methods so that a change of
machine load hits all of them; printed per method: the median over rounds of the round's ``t_method / t_naive``
and its range, beside the issue's target (a GPU figure: H100/H200, ``transformer_big`` bf16, 4,096 tokens; on a
CPU the ratios show the compute, not the host-device synchronisations a GPU waits on).

Decoding (``--decode-sentences`` > 0): beam 5 through ``lsnmt.decode.beam.beam_search`` (what ``translate`` runs) of
each route of each method (FD and LMS+FD: both), EOS banned until ``--decode-steps`` tokens and forced there so
that every model decodes the same tokens; target tokens per second, median over rounds, and the ratio to naive.
``--profile NAME`` prints where one update of NAME spends its time (torch.profiler, self time per op) instead, and
``--flops`` each method's FLOPs per update and their ratio to naive's (counted on the meta device, nothing run).
CLM at its paper's k costs by its maths (Eq. 2: ``k`` maps of ``d x d`` per token in each of 30 modules, three
bank products per update: ``models.ls.clm.MixFunction``) about 43x (sCLM) and 30x (mCLM) naive's FLOPs
(docs/ls_speed.md: 57x and 40x with the former checkpointed mix's fourth product): add them with ``--only``.
``--tiny`` shrinks every model to 32 dimensions (its layers kept, so that layer-indexed methods build as they do at
full size): the test.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt.data.corpus import Sample
from lsnmt.decode.beam import beam_search
from lsnmt.experiment.params import Params
from lsnmt.methods import resolve, with_route
from lsnmt.train.loss import default_criterion
from lsnmt.typed import build as build_config
from models.build import build_transformer
from models.config.kinds import routes
from models.config.model import ModelConfig
from models.lang import LangContext
from models.ls import criterion
from models.ls.lsl import LSLConfig
from models.transformer import Transformer

VOCAB, PAD, EOS, LANGS = 8000, 1, 2, 9
SOURCES = {"lms": ("opus100", "lms"), "lms_fd": ("opus100", "lms_fd"), "fd": ("iwslt14", "fd"),
           "switch": ("opus100", "switch"), "clsr": ("opus100", "clsr"),
           "sclm-k194": ("opus100_clm_enxx", "sclm_k194"), "mclm-k134": ("opus100_clm_enxx", "mclm")}
TARGETS = {"lms": 1.08, "lsl": 1.15, "switch": 1.6, "clsr": 1.3, "fd": 2.0, "lms_fd": 2.0}
"""The issue's targets (update time / naive's, one H100/H200, transformer_big bf16, 4,096 tokens)."""
DEFAULT = ("lms", "lms_fd", "fd", "switch", "clsr", "lsl")
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
TINY = {"embed_dim": 32, "ffn_dim": 64, "heads": 2}
"""``--tiny``'s dimensions (the preset's layers)."""


def methods() -> dict[str, tuple[str | None, Any]]:
    """``name -> (kind, config)``: naive, the params.yaml entries of :data:`SOURCES` and LSL (src 1, tgt 2)."""
    params = Params.load(ROOT / "params.yaml")
    out: dict[str, tuple[str | None, Any]] = {"naive": (None, None)}
    for name, (exp, method) in SOURCES.items():
        out[name] = resolve(params.experiments[exp].method_cfg, method)
    out["lsl"] = ("lsl", LSLConfig(src=(1,), tgt=(2,)))
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != "naive", kv[0] not in DEFAULT)))


def directions(mixed: bool) -> list[tuple[int, int]]:
    """English-centric directions of :data:`LANGS` languages (English = 0), or one of them."""
    pairs = [(0, x) for x in range(1, LANGS)] + [(x, 0) for x in range(1, LANGS)]
    return pairs if mixed else pairs[:1]


def batch(tokens: int, device: torch.device, mixed: bool, length: int = 32) -> Sample:
    """About ``tokens`` target tokens in rows of ``length``, the rows spread over :func:`directions`, collated as the
    trainer collates (a :class:`~lsnmt.data.corpus.Sample`: its token count known on the host, no sync to read)."""
    g = torch.Generator().manual_seed(0)
    rows = max(1, tokens // length)
    src = torch.randint(4, VOCAB, (rows, length), generator=g)
    tgt = torch.randint(4, VOCAB, (rows, length), generator=g)
    src[:, -1] = tgt[:, -1] = EOS
    prev = torch.cat([torch.full((rows, 1), EOS), tgt[:, :-1]], 1)
    dirs = directions(mixed)
    s, t = zip(*(dirs[i % len(dirs)] for i in range(rows)), strict=True)
    langs = LangContext(torch.tensor(s), torch.tensor(t)).to(device)  # as the trainer moves a collated batch
    return Sample(src.to(device), prev.to(device), tgt.to(device), langs, int(tgt.ne(PAD).sum()))


def build(kind: str | None, cfg: Any, arch: str, device: torch.device, tiny: bool = False
          ) -> tuple[Transformer, Callable]:
    """The method's model on ``arch`` (``tiny``: at :data:`TINY`'s dimensions) and its training criterion."""
    torch.manual_seed(1)
    model_cfg = build_config(ModelConfig, {"arch": arch, **(TINY if tiny else {})}, "model")
    model = build_transformer(model_cfg, vocab_size=VOCAB, num_languages=LANGS, method=kind,
                              method_cfg=cfg).to(device)
    crit = criterion(kind) or default_criterion
    return model, crit


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


PRECISION = {"fp32": None, "bf16": torch.bfloat16}
"""``--precision``: bf16 runs forwards under ``torch.autocast`` (the trainer's ``train.precision: bf16``)."""
DTYPE: torch.dtype | None = None


def autocast(device: torch.device) -> Any:
    if DTYPE is None:  # fp32 (and the meta device of --flops, which autocast does not know)
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=DTYPE)


def update(model: Transformer, crit: Callable, opt: torch.optim.Optimizer, b: Sample) -> None:
    opt.zero_grad(set_to_none=True)
    with autocast(b.src_tokens.device):
        loss, _, ntok = crit(model, b, 0.1, PAD)
        aux = model.aux_loss()
    (loss + (aux * ntok if aux is not None else 0)).backward()
    opt.step()


def train_time(model: Transformer, crit: Callable, opt: torch.optim.Optimizer, b: Sample, steps: int,
               device: torch.device, clock: Callable[[], float] = time.perf_counter) -> float:
    model.train()
    sync(device)
    t = clock()
    for _ in range(steps):
        update(model, crit, opt, b)
    sync(device)
    return (clock() - t) / steps


def decode_tps(model: Transformer, b: Sample, sentences: int, steps: int, device: torch.device,
               clock: Callable[[], float] = time.perf_counter) -> float:
    """Beam-5 target tokens per second over the first ``sentences`` rows of ``b`` (exactly ``steps`` each)."""
    model.eval()
    src, langs = b.src_tokens[:sentences], b.langs.index_select(torch.arange(sentences, device=device))
    sync(device)
    t = clock()
    with autocast(device):
        beam_search(model, src, langs, beam=5, max_len_b=steps, min_len=steps, eos=EOS, pad=PAD)
    sync(device)
    return sentences * steps / (clock() - t)


def ratios(times: dict[str, list[float]]) -> dict[str, list[float]]:
    return {name: [t / base for t, base in zip(ts, times["naive"], strict=True)] for name, ts in times.items()}


def flops(model: Transformer, crit: Callable, b: Sample) -> float:
    """Floating-point operations of one update (forward, recomputed forwards, backward; not the optimizer's
    elementwise step), counted by ``torch.utils.flop_counter`` on the meta device: nothing is computed."""
    from torch.utils.flop_counter import FlopCounterMode

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    model.train()
    with FlopCounterMode(display=False) as counter:
        update(model, crit, opt, b)
    return float(counter.get_total_flops())


def profile(model: Transformer, crit: Callable, b: Sample, rows: int = 15) -> None:
    """Where one update's time goes: the ops with the largest self time."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()
    update(model, crit, opt, b)  # warm-up
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with torch_profile(activities=acts) as prof:
        update(model, crit, opt, b)
    key = "self_cuda_time_total" if torch.cuda.is_available() else "self_cpu_time_total"
    print(prof.key_averages().table(sort_by=key, row_limit=rows))


def main(argv: list[str] | None = None) -> None:
    known = methods()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="transformer_small")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--batching", choices=("mixed", "direction"), default="mixed")
    ap.add_argument("--decode-sentences", type=int, default=8)
    ap.add_argument("--decode-steps", type=int, default=20)
    ap.add_argument("--clock", choices=tuple(CLOCKS), default="wall")
    ap.add_argument("--precision", choices=tuple(PRECISION), default="fp32")
    ap.add_argument("--only", action="append", choices=tuple(known), help="methods to time besides naive")
    ap.add_argument("--profile", choices=tuple(known), help="print one update's profile of this method and exit")
    ap.add_argument("--flops", action="store_true", help="print each method's FLOPs per update / naive's and exit")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads(), help="CPU threads of torch")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--tiny", action="store_true", help="32-dimensional models, layers kept (the test)")
    args = ap.parse_args(argv)
    arch = args.arch + (" (tiny)" if args.tiny else "")
    torch.set_num_threads(args.threads)
    device, clock = torch.device(args.device), CLOCKS[args.clock]
    global DTYPE
    DTYPE = PRECISION[args.precision]
    b = batch(args.tokens, device, args.batching == "mixed")
    if args.profile:
        profile(*build(*known[args.profile], args.arch, device, args.tiny), b)
        return
    chosen = args.only or [n for n in known if n in DEFAULT]
    names = ["naive", *(n for n in known if n != "naive" and n in chosen)]
    if args.flops:
        meta = torch.device("meta")
        mb = batch(args.tokens, meta, args.batching == "mixed")
        counts = {n: flops(*build(*known[n], args.arch, meta, args.tiny), mb) for n in names}
        print(f"{arch}, {b.src_tokens.numel()} target tokens per update, {args.batching} batches (meta device)")
        for n, f in counts.items():
            print(f"{n:10s} {f / 1e9:10.1f} GFLOP per update {f / counts['naive']:7.2f}x naive")
        return
    models = {name: build(*known[name], args.arch, device, args.tiny) for name in names}
    opts = {name: torch.optim.AdamW(m.parameters(), lr=1e-4) for name, (m, _) in models.items()}
    times: dict[str, list[float]] = {name: [] for name in names}
    for name, (m, c) in models.items():  # warm-up
        train_time(m, c, opts[name], b, 1, device)
    for _ in range(args.rounds):
        for name, (m, c) in models.items():
            times[name].append(train_time(m, c, opts[name], b, args.steps, device, clock))
    print(f"device {device}, {torch.get_num_threads()} threads, {arch}, {b.src_tokens.numel()} target tokens "
          f"per update, {args.batching} batches, {args.precision}, {args.rounds} rounds of {args.steps} updates, "
          f"{args.clock} clock")
    print(f"{'method':10s} {'params':>8s} {'s/update':>9s} {'vs naive: median':>17s} {'min':>6s} {'max':>6s} "
          f"{'target (GPU)':>13s}")
    for name, rs in ratios(times).items():
        size = sum(p.numel() for p in models[name][0].parameters())
        target = f"<= {TARGETS[name]:.2f}x" if name in TARGETS else "measured"
        print(f"{name:10s} {size / 1e6:7.1f}M {statistics.median(times[name]):9.3f} {statistics.median(rs):16.2f}x "
              f"{min(rs):5.2f}x {max(rs):5.2f}x {target if name != 'naive' else '':>13s}")
    if args.decode_sentences > 0:
        decode(models, known, args, b, device)


def decode(models: dict[str, tuple[Transformer, Callable]], known: dict[str, tuple[str | None, Any]],
           args: argparse.Namespace, b: Sample, device: torch.device) -> None:
    """Beam-5 tokens/s of every route of every method, median over rounds, and the ratio to naive."""
    systems: dict[str, Transformer] = {}
    for name, (model, _) in models.items():
        kind, cfg = known[name]
        systems[name] = model
        for route in routes(kind, cfg):
            if cfg is not None and route != getattr(cfg, "route", None):
                other, _ = build(kind, with_route(kind, cfg, route), args.arch, device, args.tiny)
                other.load_state_dict(model.state_dict())
                systems[f"{name}/{route}"] = other
    n = min(args.decode_sentences, b.src_tokens.size(0))
    tps: dict[str, list[float]] = {name: [] for name in systems}
    for m in systems.values():  # warm-up
        decode_tps(m, b, n, 2, device)
    for _ in range(args.rounds):
        for name, m in systems.items():
            tps[name].append(decode_tps(m, b, n, args.decode_steps, device, CLOCKS[args.clock]))
    print(f"beam 5, {n} sentences x {args.decode_steps} tokens ({args.batching} directions), target tokens/s:")
    base = statistics.median(tps["naive"])
    for name, ts in tps.items():
        print(f"decode {name:12s} {statistics.median(ts):8.0f} tok/s   vs naive {statistics.median(ts) / base:5.2f}")


if __name__ == "__main__":
    main()
