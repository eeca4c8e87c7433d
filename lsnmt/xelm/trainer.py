"""Training one decoder-only LM: the seed, an expert, an HMR expert or dense LAPT (:class:`LMJob`).

One update draws ``batch_tokens / B`` blocks (:class:`~lsnmt.xelm.corpus.TokenStream`), optionally in
micro-batches of ``max_tokens`` (gradient accumulation), and minimises the mean next-token cross entropy
(no label smoothing, as XGLM). AdamW (x-elm's released settings, :class:`~lsnmt.xelm.config.LMTrainConfig`), with
``fp16`` on a GPU a dynamic loss scale (an overflowing update is skipped and not counted), the global gradient norm
clipped to ``clip_norm``, and update ``n + 1`` runs at ``lr(n)`` of the job's schedule (:func:`schedule`: ``linear``
decay, ``inverse_sqrt`` or ``constant``), all assembled by :func:`lsnmt.train.job.assemble`: the project's one update,
:func:`lsnmt.train.update.update`, given the micro-batches' summed nll over the update's tokens. Dropout is
re-seeded from ``(seed, n)`` before update ``n + 1``, so a run resumed from ``work_dir/last.pt`` (written every
``save_every`` updates, with the optimizer, the stream cursor and the RNG states) gives bit-identical weights on
CPU. The updates run on :func:`lsnmt.train.loop.run_updates`: the update's nll and gradient norm stay on the
device until the loop's next check, whose NaN guard stops the job before any checkpoint of a non-finite update;
SIGTERM / SIGUSR1 saves ``last.pt`` after the update in progress and raises :class:`~lsnmt.train.loop.Interrupted`.
A work dir whose fingerprint (model, training settings, data selection, the weights branched from) differs is
moved aside.

**Several ranks** (``torchrun``, :class:`lsnmt.train.dist.Dist`: NCCL on GPUs, gloo on CPUs): every rank reads the
same stream and trains a contiguous share of each update's blocks (:func:`rank_rows`; the blocks per update must
divide by the ranks) through DDP, each rank's nll divided by ``N / W`` (``N`` the update's predicted tokens, ``W``
the ranks), so that DDP's average is the token mean; rank 0 alone writes files. Each rank draws its own dropout
masks, ``(seed, n, rank)``: with dropout, weights depend on the number of ranks (which enters the fingerprint).

Writes ``out_dir/model.pt`` (``{"model", "config", "step"}``), ``curve.tsv`` and ``data.json`` (documents
and tokens per language of the selection, tokens seen) atomically.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lsnmt.data.fetch import file_digests
from lsnmt.io import atomic_dir, write_json
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.curve import Curve, Meters
from lsnmt.train.dist import Dist, pick_device
from lsnmt.train.job import assemble, open_work_dir
from lsnmt.train.job import fingerprint as digest
from lsnmt.train.loop import Job, Update, run_updates
from lsnmt.train.loss import smoothed_cross_entropy
from lsnmt.train.optim import Schedule, adam_of
from lsnmt.train.update import Micro, Updater, seed_forward, update
from lsnmt.xelm.config import LMConfig, LMTrainConfig
from lsnmt.xelm.corpus import Selection, TokenStream
from models.lm import DecoderOnlyLM, build_lm, param_count

log = logging.getLogger(__name__)

NO_EFFECT = ("log_every", "save_every")


@dataclass(frozen=True)
class LMJob:
    """What one training job does: its settings, the tokens per update, its data and where it branches from."""

    name: str
    train: LMTrainConfig
    batch_tokens: int
    selection: Selection
    init: Path | None = None
    """``model.pt`` of the model this one branches from (x-BTM Step 1); ``None``: random initialisation."""


def schedule(cfg: LMTrainConfig) -> Schedule:
    """The job's learning-rate schedule (:class:`lsnmt.train.optim.Schedule`; x-elm App. A.1: ``linear``)."""
    return Schedule(kind=cfg.schedule, lr=cfg.lr, warmup=cfg.warmup_updates, total=cfg.updates,
                    warmup_init_lr=cfg.warmup_init_lr, end_lr=cfg.end_lr)


def update_seed(seed: int, n: int) -> int:
    return int(np.random.SeedSequence([seed, n]).generate_state(1, np.uint64)[0])


def load_lm(path: Path, device: torch.device | str = "cpu") -> DecoderOnlyLM:
    """A trained LM from its ``model.pt`` (config included), in eval mode."""
    state = ckpt.load(path, device)
    cfg = state["config"]
    model = build_lm(LMConfig(**cfg["lm"]), vocab_size=cfg["vocab_size"], padding_idx=cfg["pad"])
    model.load_state_dict(state["model"])
    return model.to(device).eval()


def fingerprint(job: LMJob, lm: LMConfig, meta: dict, world_size: int = 1) -> str:
    train = {k: v for k, v in asdict(job.train).items() if k not in NO_EFFECT}
    sel = hashlib.sha256()
    for lang in sorted(job.selection.docs):
        sel.update(lang.encode() + np.ascontiguousarray(job.selection.docs[lang], dtype=np.int64).tobytes())
    blob = {"lm": asdict(lm), "train": train, "batch_tokens": job.batch_tokens,
            "selection": sel.hexdigest(), "init": file_digests(job.init)["sha256"] if job.init else None,
            "tokens": meta["tokens"]["train"], "vocab_size": meta["vocab_size"]}
    if world_size > 1:  # each rank draws its own dropout masks
        blob["world_size"] = world_size
    return digest(blob)


def _update(t: Updater, blocks: torch.Tensor, job: LMJob, pad: int, step: int, ntok: int, lr: float) -> Update:
    """Update ``step + 1`` from this rank's ``blocks`` (``ntok``: predicted tokens of the whole update, all ranks)
    on the project's one update (:func:`lsnmt.train.update.update`) at rate ``lr``: the micro-batches' summed nll over
    ``ntok``."""
    cfg = job.train
    micro = max(1, (cfg.max_tokens or blocks.numel()) // (blocks.size(1) - 1))
    norm = ntok / t.dist.world_size  # DDP averages over ranks: each rank's sum over ntok / W gives the token mean

    def forward(mb: torch.Tensor) -> Micro:
        def loss() -> tuple[torch.Tensor, torch.Tensor]:
            logits = t.net(mb[:, :-1])  # (b, B, V)
            _, nll = smoothed_cross_entropy(logits, mb[:, 1:], 0.0, pad)
            return nll / norm, nll.detach().reshape(1)

        return loss

    done = update(t, [forward(mb) for mb in blocks.split(micro)], lr, step)
    nll = done.stats[0]
    return Update(loss=nll, nll=nll, ntokens=ntok, lr=lr, grad_norm=done.grad_norm, skipped=done.skipped)


def device_for(threads: int) -> torch.device:
    """CUDA if there is a GPU, else the CPU with ``threads`` threads (:func:`lsnmt.train.dist.pick_device`)."""
    return pick_device(0, threads)


def rank_rows(n_blocks: int, dist: Dist) -> slice:
    """This rank's rows of an update's ``n_blocks`` blocks (a contiguous share; ``n_blocks`` divisible by the
    number of ranks)."""
    if n_blocks % dist.world_size:
        raise ValueError(f"batch_tokens gives {n_blocks} blocks per update, not divisible by {dist.world_size} ranks")
    share = n_blocks // dist.world_size
    return slice(dist.rank * share, (dist.rank + 1) * share)


def dropout_seed(seed: int, n: int, dist: Dist) -> int:
    """The dropout seed of update ``n + 1`` (one process: ``(seed, n)``; several ranks: ``(seed, n, rank)``, so
    that the ranks draw different masks)."""
    if dist.world_size == 1:
        return update_seed(seed, n)
    return int(np.random.SeedSequence([seed, n, dist.rank]).generate_state(1, np.uint64)[0])


def train_lm(job: LMJob, lm: LMConfig, lm_dir: Path, meta: dict, work_dir: Path, out_dir: Path, *,
             threads: int = 1) -> dict[str, Any]:
    """Train ``job`` (resuming from ``work_dir``) and write ``out_dir``; returns what ``data.json`` holds.

    Under ``torchrun`` every rank trains its share of each update's blocks (:func:`rank_rows`, DDP; gloo ranks on
    a CPU) and rank 0 alone writes files."""
    dist = Dist.from_env(threads)
    try:
        return _train(job, lm, lm_dir, meta, work_dir, out_dir, dist)
    finally:
        dist.close()


def _train(job: LMJob, lm: LMConfig, lm_dir: Path, meta: dict, work_dir: Path, out_dir: Path,
           dist: Dist) -> dict[str, Any]:
    cfg, device = job.train, dist.device
    torch.manual_seed(cfg.seed)
    model = build_lm(lm, vocab_size=meta["vocab_size"], padding_idx=meta["pad"])
    if job.init is not None:
        model.load_state_dict(ckpt.load(job.init)["model"])
    parts = assemble(model.to(device), adam=adam_of(cfg), schedule=schedule(cfg), device=device,
                     precision=cfg.precision, init_scale=cfg.fp16_init_scale)
    stream = TokenStream(lm_dir, job.selection, vocab_size=meta["vocab_size"], eos=meta["eos"], block=lm.block_size,
                         seed=cfg.seed)
    config = {"job": job.name, "lm": asdict(lm), "train": asdict(cfg), "batch_tokens": job.batch_tokens,
              "init": str(job.init) if job.init else None, "vocab_size": meta["vocab_size"], "pad": meta["pad"],
              "eos": meta["eos"], "fingerprint": fingerprint(job, lm, meta, dist.world_size)}
    open_work_dir(work_dir, config, dist)
    meters = Meters()

    def restore(saved: dict[str, Any]) -> None:
        stream.load_state_dict(saved["stream"])
        meters.load_state_dict(saved["meters"])

    found = parts.resume(work_dir, device, restore)
    step = 0 if found is None else found[1]
    if found is not None:
        log.info("%s: resumed from %s at update %d", job.name, found[0], step)
    t = parts.updater(dist, precision=cfg.precision, clip_norm=cfg.clip_norm)
    curve = Curve(work_dir / "curve.tsv", step if found is not None else None) if dist.is_main else None
    log.info("%s: %d parameters, %d updates of %d tokens on %d blocks", job.name, param_count(model), cfg.updates,
             job.batch_tokens, stream.n_blocks)
    n_blocks = job.batch_tokens // lm.block_size
    rows, ntok = rank_rows(n_blocks, dist), n_blocks * lm.block_size

    def step_fn(n: int) -> Update:
        seed_forward(dropout_seed(cfg.seed, n, dist), device)
        blocks = torch.from_numpy(stream.take(n_blocks)[rows]).to(device)
        return _update(t, blocks, job, meta["pad"], n, ntok, parts.lr(n))

    def save(n: int, *, periodic: bool, improved: bool) -> None:
        del periodic, improved  # every save (periodic or a stop's) writes last.pt
        parts.save_last(work_dir, n, {"stream": stream.state_dict(), "meters": meters.state_dict(),
                                      "config": config})

    step = run_updates(Job(name=job.name, total=cfg.updates, log_every=cfg.log_every, save_every=cfg.save_every,
                           update=step_fn, save=save, logger=log, is_main=dist.is_main, agree=dist.agree,
                           barrier=dist.barrier), step, meters, curve)
    info = {"job": job.name, "updates": step, "batch_tokens": job.batch_tokens,
            "tokens_seen": step * job.batch_tokens, "init": config["init"], "data": job.selection.summary(lm_dir)}
    if dist.is_main:
        _write_out(out_dir, model, config, step, work_dir, info)
    dist.barrier()
    return info


def _write_out(out_dir: Path, model: torch.nn.Module, config: dict[str, Any], step: int, work_dir: Path,
               info: dict[str, Any]) -> None:
    """``out_dir``'s ``model.pt``, ``curve.tsv`` and ``data.json``, atomically."""
    with atomic_dir(out_dir) as tmp:
        ckpt.save(tmp / "model.pt", {"model": {k: v.cpu() for k, v in model.state_dict().items()},
                                     "config": config, "step": step})
        (tmp / "curve.tsv").write_text((work_dir / "curve.tsv").read_text(encoding="utf-8"), encoding="utf-8")
        write_json(tmp / "data.json", info)
