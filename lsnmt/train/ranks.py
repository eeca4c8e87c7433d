"""A run resumed on another number of ranks: resumed where the data of every update stays the same, refused in one
line where it would not.

An update takes the next ``b = W * F`` global batches of the stream (``W`` ranks, ``F = train.update_freq``;
:mod:`lsnmt.train.feed`), the gradient is the same sum over them however they are spread over ranks, and dropout
is seeded per global batch: so ``b``, not ``W`` or ``F``, is what the weights depend on. A run's fingerprint
(:func:`lsnmt.train.trainer.fingerprint`) therefore holds ``b``, and a SLURM job requeued on a node with fewer GPUs
resumes when ``F`` makes up for it (2 ranks x 1 -> 1 rank x 2: the same weights up to float rounding, since the
gradient is summed in another order).

Where the new ranks change ``b``, the stream would go on in batches of another size: rather than moving the work
folder aside and training afresh (what a changed setting does), :func:`check_ranks` stops with
:class:`RanksMismatch`, naming both layouts and the ``update_freq`` that resumes, so that a requeue never throws
away a long run silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsnmt.io import DataError


class RanksMismatch(DataError):
    """The work folder's run took another number of global batches per update because the ranks changed."""


def stored_ranks(config: dict[str, Any]) -> int:
    """The ranks a work folder's ``config.json`` was trained on (``world_size``; a folder written before it was
    stored: the ranks its settings asked for)."""
    if "world_size" in config:
        return int(config["world_size"])
    train = config.get("train", {})
    return max(1, int(train.get("gpus_per_node", 1))) * int(train.get("nodes", 1))


def check_ranks(work_dir: Path, world_size: int, update_freq: int, fingerprint: Callable[[int, int], str]) -> None:
    """Raise :class:`RanksMismatch` when ``work_dir`` holds a run that differs from this one only in its ranks and
    so in its batches per update. ``fingerprint(W, F)``: this run's fingerprint on ``W`` ranks with ``update_freq
    F``. Read-only: every rank calls it."""
    path = work_dir / "config.json"
    if not path.is_file():
        return
    old = json.loads(path.read_text(encoding="utf-8"))
    old_w, old_f = stored_ranks(old), int(old.get("train", {}).get("update_freq", 0))
    if old_w == world_size or old_f < 1 or fingerprint(old_w, old_f) != old.get("fingerprint"):
        return  # the same ranks, or other settings changed too: the trainer's rule (afresh) holds
    before, now = old_w * old_f, world_size * update_freq
    if before == now:
        return
    fix = (
        f"set train.update_freq: {before // world_size} to resume it on {world_size} rank(s)"
        if before % world_size == 0
        else f"run it on {old_w} rank(s) again to resume it"
    )
    raise RanksMismatch(
        f"{work_dir}: its run took {before} global batches per update ({old_w} rank(s) x train.update_freq {old_f}), "
        f"this one would take {now} ({world_size} x {update_freq}), another data order; {fix}, or move the folder "
        f"away to train afresh"
    )
