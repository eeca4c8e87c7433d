"""One job assembly for the three trainers: translation (:mod:`lsnmt.train.trainer`), x-elm's LMs
(:mod:`lsnmt.xelm.trainer`) and the XLM-R tasks (:mod:`lsnmt.tasks.train`).

Each trainer gives flat values (its model, :class:`~lsnmt.train.optim.Adam` settings, a
:class:`~lsnmt.train.optim.Schedule`, its precision) and :func:`assemble` gives back its :class:`Parts`: the
optimizer, the fp16 loss scale and the schedule, which write and restore its checkpoints; the trainer's
fingerprint is :func:`fingerprint` of the JSON blob of what fixes its weights, its work dir opened by
:func:`open_work_dir`. What each trainer keeps of its own: its data (a stream cursor, an epoch's state) as the
``extra`` entries of its checkpoints, and which files it saves when (translation's ``step{N}.pt``/``best.pt``).

**Fingerprint.** ``sha256`` of the blob's JSON (sorted keys, other values by ``str``). A work dir holding another
fingerprint is moved to ``{work_dir}.stale`` and the job starts afresh (:func:`prepare_work_dir`).

**Checkpoints** (``last.pt``, ``step{N}.pt``)::

    model, optimizer, scaler ({} unless fp16 on a GPU), step, rng (torch / CUDA / numpy / Python), **extra

**Resume** from ``last.pt`` or, where that is damaged, from the newest intact ``step{N}.pt``
(:func:`lsnmt.train.checkpoint.resume`): the model, the optimizer and the loss scale, then the trainer's own entries
(``restore``), then the RNG states last, so that nothing a trainer restores draws from them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from lsnmt.io import write_json
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.dist import Dist
from lsnmt.train.optim import Adam, Schedule
from lsnmt.train.update import Updater, grad_scaler, wrap_ddp

log = logging.getLogger(__name__)


def fingerprint(blob: Mapping[str, Any]) -> str:
    """SHA-256 of ``blob``'s JSON (sorted keys; a value JSON does not know by its ``str``)."""
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()


def prepare_work_dir(work_dir: Path, config: dict[str, Any]) -> None:
    """Move a work dir of another fingerprint (``config["fingerprint"]``) aside; record this one's config (rank 0)."""
    path = work_dir / "config.json"
    if work_dir.is_dir() and any(work_dir.iterdir()):
        old = json.loads(path.read_text(encoding="utf-8")).get("fingerprint") if path.is_file() else None
        if old != config["fingerprint"]:
            stale = work_dir.with_name(work_dir.name + ".stale")
            log.warning("%s holds a run with other settings: moved to %s, starting afresh", work_dir, stale)
            shutil.rmtree(stale, ignore_errors=True)
            work_dir.rename(stale)
    work_dir.mkdir(parents=True, exist_ok=True)
    ckpt.remove_partial(work_dir)
    write_json(path, config)


def open_work_dir(work_dir: Path, config: dict[str, Any], dist: Dist | None = None) -> None:
    """:func:`prepare_work_dir` on the main rank, then every rank waits for it."""
    if dist is None or dist.is_main:
        prepare_work_dir(work_dir, config)
    if dist is not None:
        dist.barrier()


@dataclass(eq=False, kw_only=True)
class Parts:
    """A job's optimizer, loss scale and schedule, and its checkpoints (:func:`assemble`)."""

    model: nn.Module
    """The bare model (no DDP wrapper): what is stepped and saved."""
    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    schedule: Schedule

    def lr(self, n: int) -> float:
        """The rate of update ``n + 1``."""
        return self.schedule.at(n)

    def state(self, step: int, extra: Mapping[str, Any]) -> dict[str, Any]:
        """What a checkpoint after ``step`` updates holds, ``extra`` the trainer's own entries (module
        docstring)."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler.is_enabled() else {},
            "step": step,
            "rng": ckpt.rng_state(),
            **extra,
        }

    def save_last(self, work_dir: Path, step: int, extra: Mapping[str, Any]) -> None:
        """``work_dir/last.pt`` after ``step`` updates."""
        ckpt.save(work_dir / "last.pt", self.state(step, extra))

    def resume(
        self, work_dir: Path, device: torch.device, restore: Callable[[dict[str, Any]], None]
    ) -> tuple[Path, int] | None:
        """Restore the job from ``work_dir`` (module docstring): ``(file, step)``, or ``None`` where there is
        nothing to resume from. ``restore(saved)`` reads the trainer's own entries. A damaged ``last.pt`` without
        an intact ``step{N}.pt`` stops here, in one line."""
        found = ckpt.resume(work_dir, device)
        if found is None:
            return None
        path, saved = found
        self.model.load_state_dict(saved["model"])
        self.optimizer.load_state_dict(saved["optimizer"])
        if saved.get("scaler"):
            self.scaler.load_state_dict(saved["scaler"])
        restore(saved)
        ckpt.set_rng_state(saved["rng"])
        return path, _step(saved)

    def updater(self, dist: Dist, *, precision: str, clip_norm: float) -> Updater:
        """The update state of the model (on ``dist.device``; wrapped in DDP when several ranks train), for
        :func:`lsnmt.train.update.update`."""
        ddp = wrap_ddp(self.model, dist)
        return Updater(
            model=self.model,
            net=ddp if ddp is not None else self.model,
            optimizer=self.optimizer,
            scaler=self.scaler,
            dist=dist,
            ddp=ddp,
            precision=precision,
            clip_norm=clip_norm,
        )


def _step(saved: Mapping[str, Any]) -> int:
    """Updates done (a task unit's ``last.pt`` written before it stored ``step`` holds its scheduler's count)."""
    return int(saved["step"]) if "step" in saved else int(saved["scheduler"]["last_epoch"])


def assemble(
    model: nn.Module,
    *,
    adam: Adam,
    schedule: Schedule,
    device: torch.device,
    precision: str = "fp32",
    init_scale: float = 2.0**16,
) -> Parts:
    """The :class:`Parts` of a job training ``model`` (already on ``device``): AdamW of ``adam`` (starting at the
    schedule's first rate), a loss scale from ``init_scale`` for fp16 on a GPU."""
    return Parts(
        model=model,
        optimizer=adam.build(model, device, schedule.at(0)),
        scaler=grad_scaler(precision, device, init_scale),
        schedule=schedule,
    )
