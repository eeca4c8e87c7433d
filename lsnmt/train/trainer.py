"""The training loop: ``train(spec, bin_dir, out_dir, work_dir)``.

Resumable state lives in ``work_dir`` (``work/ckpt/{method}``, undeclared:
Snakemake and DVC delete declared outputs), the finished model and curve are
copied to ``out_dir`` (``results/train/{method}``)::

    work_dir/config.json     fingerprint of everything that fixes the weights
    work_dir/step{N}.pt      every save_every updates, the newest keep_last kept
    work_dir/last.pt         hard link to the newest step{N}.pt: resumed automatically
    work_dir/best.pt         lowest validation loss (token-weighted over the directions, as fairseq)
    work_dir/curve.tsv       step, loss, nll, lr, valid_loss
    out_dir/model.pt         {"model", "config", "step", "source"}: best, last or the
                             average of the last N (``train.final_checkpoint``, ``train.average_last``)
    out_dir/curve.tsv

A ``work_dir`` whose fingerprint differs (changed model, training or data
settings, or global batches per update) is moved to ``{work_dir}.stale`` and training starts afresh; changing
only ``max_steps``, ``log_every``, ``validate_every``, ``save_every`` or
``keep_last`` resumes. Another number of ranks resumes where ranks x ``update_freq`` stays the same and is refused
in one line where it does not (:mod:`lsnmt.train.ranks`). Under ``torchrun`` every rank trains (DDP, NCCL on CUDA,
gloo on CPU); rank 0 alone logs and writes files. A CPU run is bitwise
reproducible for a given seed, however often it was interrupted.

SIGTERM (SLURM preemption, ``scancel``, the time limit) or SIGUSR1 asks the run to stop: after the
update in progress, all ranks agree on the step, rank 0 writes ``last.pt`` (not a ``step{N}.pt``, so
that ``keep_last`` and checkpoint averaging see the same files as in an uninterrupted run) and
:class:`Interrupted` is raised; the next call resumes from there, bit for bit on CPU.

The updates run on the project's one loop, :func:`lsnmt.train.loop.run_updates` (logging, the curve, the NaN
guard, validation, saves, the stop signals); this module gives it its hooks: the step
(:func:`lsnmt.train.step.train_step` on the batches :class:`lsnmt.train.feed.Feed` builds ahead), validation
and the checkpoint files. ``train.compile`` runs the forward through ``torch.compile``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from lsnmt.data.config import DataConfig
from lsnmt.data.corpus import Vocab, load_split
from lsnmt.io import atomic_write
from lsnmt.train import checkpoint as ckpt
from lsnmt.train import faults, ranks, tracker
from lsnmt.train.announce import announce, start_line
from lsnmt.train.batching import BatchStream, Pool
from lsnmt.train.compiled import compile_net
from lsnmt.train.config import TrainConfig
from lsnmt.train.curve import Curve
from lsnmt.train.dist import Dist
from lsnmt.train.feed import Feed, StepBatches
from lsnmt.train.job import assemble, open_work_dir
from lsnmt.train.job import fingerprint as digest
from lsnmt.train.loop import Interrupted, Job, Update, Validation, run_updates
from lsnmt.train.loss import default_criterion
from lsnmt.train.optim import Schedule, adam_of
from lsnmt.train.step import EvalSet, Run, eval_plan, mean_loss, train_step, validate
from models.build import build_transformer
from models.config.model import ModelConfig
from models.ls.base import Criterion

log = logging.getLogger(__name__)

__all__ = ["Interrupted", "ModelFactory", "fingerprint", "schedule", "setup", "train", "wrap"]

NO_EFFECT = ("max_steps", "log_every", "validate_every", "save_every", "keep_last", "gpus_per_node", "nodes",
             "compile", "tracker")
"""Training settings that do not change the weights of a given step: a run resumes across changes to them
(``gpus_per_node`` and ``nodes`` enter the fingerprint through the ranks times ``update_freq``, which does;
``compile`` changes the rounding of a step, not its maths)."""

class Training(Protocol):
    """What a training reads of params.yaml: ``data`` (its directions), ``model`` and ``train``. The train stage's
    view (:class:`lsnmt.train.config.TrainView`), the search's runs and the claim's jobs are one; a dataclass, so that a
    phase replaces a section (``dataclasses.replace(spec, train=...)``)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def data(self) -> DataConfig: ...

    @property
    def model(self) -> ModelConfig: ...

    @property
    def train(self) -> TrainConfig: ...


class ModelFactory(Protocol):
    """``models.build.build_transformer`` (with ``method``/``method_cfg`` bound, e.g. by ``functools.partial``)."""

    def __call__(self, cfg: ModelConfig, *, vocab_size: int, num_languages: int, padding_idx: int) -> nn.Module: ...


def fingerprint(spec: Training, bin_dir: Path, method: Mapping[str, Any] | None = None,
                world_size: int | None = None) -> str:
    """SHA-256 of the model and training settings, the training directions and ``meta.json`` (and of the
    method's record, when given: a changed method config or search-selected layout starts afresh). The ranks
    (``world_size``, default the settings') enter as the global batches per update, ranks x ``update_freq``
    (:mod:`lsnmt.train.ranks`): one rank's fingerprint is what it was before they did."""
    train = {k: v for k, v in asdict(spec.train).items() if k not in NO_EFFECT}
    train["update_freq"] *= spec.train.world_size if world_size is None else world_size
    blob = {"model": asdict(spec.model), "train": train, "pairs": spec.data.train_pairs,
            "meta": json.loads((bin_dir / "meta.json").read_text(encoding="utf-8"))}
    if method is not None:
        blob["method"] = method
    if (plan := sampling_plan(bin_dir)) is not None:  # the per-epoch draw fixes the data of every step
        blob["sampling"] = plan
    return digest(blob)


def sampling_plan(bin_dir: Path) -> dict[str, Any] | None:
    """``bin_dir/sampling.json`` (the sample stage's plan, copied by encode), or ``None``."""
    path = bin_dir / "sampling.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _config(spec: Training, vocab: Vocab, fp: str, method: Mapping[str, Any] | None) -> dict[str, Any]:
    config = {"model": asdict(spec.model), "train": asdict(spec.train), "vocab_size": vocab.size, "pad": vocab.pad,
              "eos": vocab.eos, "languages": list(vocab.languages), "fingerprint": fp}
    if method is not None:
        config["method"] = dict(method)
    return config


def schedule(cfg: TrainConfig) -> Schedule:
    """fairseq's ``inverse_sqrt`` of ``train`` (:mod:`lsnmt.train.optim`)."""
    return Schedule(kind="inverse_sqrt", lr=cfg.lr, warmup=cfg.warmup_steps, warmup_init_lr=cfg.warmup_init_lr)


def setup(spec: Training, bin_dir: Path, dist: Dist, factory: ModelFactory,
          criterion: Criterion | None) -> tuple[Run, list[EvalSet]]:
    """The run's state before any update (model; fused AdamW, loss scale and ``inverse_sqrt`` schedule from
    :func:`lsnmt.train.job.assemble`; feed) and the validation plan."""
    cfg, vocab = spec.train, Vocab.load(bin_dir)
    train_dirs = load_split(bin_dir, "train", spec.data.train_pairs, vocab)
    supervised = set(spec.data.train_pairs)  # zero-shot directions are evaluated, never used to pick checkpoints
    valid_dirs = load_split(bin_dir, "valid", tuple(d for d in spec.data.eval_pairs if d in supervised), vocab)
    torch.manual_seed(cfg.seed)
    model = factory(spec.model, vocab_size=vocab.size, num_languages=len(vocab.languages),
                    padding_idx=vocab.pad).to(dist.device)
    stream = BatchStream(Pool.build(train_dirs, cfg, sampling_plan(bin_dir)), cfg, cfg.seed)
    feed = Feed(stream, train_dirs, vocab, dist, cfg.update_freq)
    parts = assemble(model, adam=adam_of(cfg, fused=True), schedule=schedule(cfg), device=dist.device,
                     precision=cfg.precision)
    run = Run(cfg=cfg, vocab=vocab, dist=dist, model=model, net=model, parts=parts, feed=feed,
              criterion=criterion or default_criterion)
    return run, eval_plan(valid_dirs, vocab, cfg.max_tokens, dist, cfg.valid_max_sentences)


def wrap(run: Run, criterion: Criterion | None) -> None:
    """DDP around the model (several ranks, the default criterion), then ``torch.compile`` (``train.compile``)."""
    if run.dist.world_size > 1 and criterion is None:
        run.ddp = DistributedDataParallel(run.model, device_ids=[run.dist.device.index]
                                          if run.dist.device.type == "cuda" else None, find_unused_parameters=True)
        run.net = run.ddp
    run.net = compile_net(run.net, run.cfg.compile, run.dist.device)


def _state(run: Run, config: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint of ``run`` (:meth:`lsnmt.train.job.Parts.state`, with the feed, best loss and meters)."""
    return run.parts.state(run.step, {"stream": run.feed.state_dict(), "best_valid": run.best_valid,
                                      "meters": run.meters.state_dict(), "config": config})


def _resume(run: Run, work_dir: Path) -> bool:
    """Restore the run from ``work_dir`` (:meth:`lsnmt.train.job.Parts.resume`); ``False``: nothing to resume
    from."""
    def restore(saved: dict[str, Any]) -> None:
        run.best_valid = float(saved["best_valid"])
        run.feed.load_state_dict(saved["stream"])
        run.meters.load_state_dict(saved["meters"])

    found = run.parts.resume(work_dir, run.dist.device, restore)
    if found is None:
        return False
    run.step = found[1]
    log.info("resumed from %s at step %d (epoch %d)", found[0], run.step, run.feed.epoch)
    return True


def _save(run: Run, config: dict[str, Any], work_dir: Path, *, periodic: bool, improved: bool) -> None:
    """Write ``step{N}.pt`` + ``last.pt`` (periodic) and ``best.pt`` (improved); never a non-finite model."""
    for name, p in run.model.state_dict().items():
        if p.is_floating_point() and not bool(torch.isfinite(p).all()):
            raise FloatingPointError(f"step {run.step}: parameter {name} is not finite; checkpoint not written")
    state, last, best = _state(run, config), work_dir / "last.pt", work_dir / "best.pt"
    if periodic and run.cfg.keep_last > 0:
        path = work_dir / f"step{run.step}.pt"
        ckpt.save(path, state)
        ckpt.link_or_copy(path, last)
        ckpt.prune(work_dir, run.cfg.keep_last)
    elif periodic:
        ckpt.save(last, state)
    if improved and periodic:
        ckpt.link_or_copy(last, best)
    elif improved:
        ckpt.save(best, state)


def _final_model(spec: Training, work_dir: Path) -> tuple[dict[str, torch.Tensor], str]:
    """The weights ``train.final_checkpoint`` asks for, and where they came from."""
    source = spec.train.final_checkpoint
    if source == "best" and not (work_dir / "best.pt").is_file():
        log.warning("no validation data, so no best.pt: using last.pt")
        source = "last"
    if source == "average":
        paths = [p for _, p in ckpt.step_checkpoints(work_dir)][-spec.train.average_last:]
        if len(paths) < spec.train.average_last:
            log.warning("averaging %d checkpoints, not %d (keep_last=%d)", len(paths), spec.train.average_last,
                        spec.train.keep_last)
        if paths:
            return ckpt.average(paths), f"average of {', '.join(p.name for p in paths)}"
        source = "last"
    remedy = f"delete {work_dir} to train afresh" + (", or set train.final_checkpoint: last" * (source == "best"))
    return ckpt.load(work_dir / f"{source}.pt", remedy=remedy)["model"], source


def _finish(run: Run, spec: Training, config: dict[str, Any], work_dir: Path, out_dir: Path) -> str:
    weights, source = _final_model(spec, work_dir)
    ckpt.save(out_dir / "model.pt", {"model": weights, "config": config, "step": run.step, "source": source})
    with atomic_write(out_dir / "curve.tsv") as fh:
        fh.write((work_dir / "curve.tsv").read_text(encoding="utf-8"))
    return source


def _job(run: Run, plan: list[EvalSet], config: dict[str, Any], work_dir: Path,
         valid: dict[str, dict[str, float]]) -> Job:
    """The loop's hooks: the step, validation (``valid`` receives the last one's results) and the checkpoints."""
    cfg = run.cfg
    current: list[StepBatches] = []  # the update in progress, described if it runs out of memory

    def update(_n: int) -> Update:
        current[:] = [run.feed.next()]
        return train_step(run, current[0])

    def describe_batch() -> str:
        samples = current[0].samples if current else []
        return faults.describe_batch([(s.src_tokens, s.target) for s in samples], sum(s.ntokens for s in samples),
                                     "train.max_tokens", cfg.max_tokens)

    def validation(step: int) -> Validation:
        valid.clear()
        valid.update(validate(run, plan))
        mean = mean_loss(valid)
        improved = mean < run.best_valid
        if improved:
            run.best_valid = mean
        line = f"valid step {step} | loss {mean:.3f} | " + " | ".join(f"{k} {v['loss']:.3f}" for k, v in valid.items())
        return Validation(mean, improved, line)

    def save(_step: int, *, periodic: bool, improved: bool) -> None:
        if periodic or improved:
            _save(run, config, work_dir, periodic=periodic, improved=improved)
        else:  # a stop: last.pt only, so that keep_last and averaging see an uninterrupted run's step files
            ckpt.save(work_dir / "last.pt", _state(run, config))

    return Job(name="train", total=cfg.max_steps, log_every=cfg.log_every, save_every=cfg.save_every,
               update=update, save=save, validate=validation if plan else None, validate_every=cfg.validate_every,
               logger=log, is_main=run.dist.is_main, agree=run.dist.agree, barrier=run.dist.barrier,
               describe_batch=describe_batch)


def train(spec: Training, bin_dir: Path, out_dir: Path, work_dir: Path,
          model_factory: ModelFactory = build_transformer, criterion: Criterion | None = None,
          method: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Train ``spec`` on the shards in ``bin_dir``; resume from ``work_dir/last.pt`` when present.

    ``criterion``: the method's training objective (``models.ls.criterion(kind)``; ``None``:
    label-smoothed cross entropy). With a custom criterion, several ranks all-reduce gradients explicitly
    instead of through DDP (a two-pass criterion runs two forwards per backward). ``method``: a JSON-able
    record of the method (``lsnmt.methods.record``), kept in the fingerprint and in ``model.pt``'s config.

    Returns ``{"step", "epoch", "best_valid", "valid", "source", "skipped_sentences"}``
    (``valid``: per-direction loss/nll in bits of the last validation of this call).
    Raises ``FloatingPointError`` naming the update whose loss or gradient is not finite, and
    :class:`Interrupted` after SIGTERM / SIGUSR1 (``last.pt`` written).
    """
    if spec.train.max_steps < 1:
        raise ValueError(f"train.max_steps must be >= 1, got {spec.train.max_steps}")
    dist = Dist.from_env()
    try:
        run, plan = setup(spec, bin_dir, dist, model_factory, criterion)
        config = _config(spec, run.vocab, fingerprint(spec, bin_dir, method, dist.world_size), method)
        config["world_size"] = dist.world_size
        ranks.check_ranks(work_dir, dist.world_size, spec.train.update_freq, lambda w, f: fingerprint(
            replace(spec, train=replace(spec.train, update_freq=f)), bin_dir, method, w))
        open_work_dir(work_dir, config, dist)
        resumed = _resume(run, work_dir)
        if dist.is_main:
            announce(log, start_line("train", run.model, run.feed.dirs, max_steps=spec.train.max_steps,
                                     max_tokens=spec.train.max_tokens, update_freq=spec.train.update_freq,
                                     device=dist.device, world_size=dist.world_size, step=run.step))
        wrap(run, criterion)
        curve = (Curve(work_dir / "curve.tsv", run.step if resumed else None,
                       tracker.start(spec.train.tracker, work_dir, resumed)) if dist.is_main else None)
        valid: dict[str, dict[str, float]] = {}
        try:
            run_updates(_job(run, plan, config, work_dir, valid), run.step, run.meters, curve)
        finally:
            run.feed.close()
        source = _finish(run, spec, config, work_dir, out_dir) if dist.is_main else ""
        dist.barrier()
        best = run.best_valid if math.isfinite(run.best_valid) else None
        return {"step": run.step, "epoch": run.feed.epoch, "best_valid": best, "valid": valid, "source": source,
                "skipped_sentences": int((~run.feed.stream.pool.keep).sum())}
    finally:
        dist.close()
