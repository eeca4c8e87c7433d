"""Checkpoints: atomic saves, ``last``/``best``/``step{N}`` files, keep-last-N, averaging.

A checkpoint is one ``torch.save`` dict::

    model      state_dict of the bare model (no DDP ``module.`` prefix)
    optimizer  optimizer state_dict           scaler   GradScaler state (fp16) or {}
    step       updates done                   stream   batch cursor {"epoch", "offset"}
    best_valid best validation loss so far    rng      torch / CUDA / numpy / Python RNG states
    meters     running log sums since the last curve row
    config     {"model": …, "train": …} as plain dicts; fingerprint: hash of what fixes the weights

Every file is written to a temporary sibling, fsynced and renamed onto its
name (``os.replace`` is atomic on POSIX), so a crash mid-save leaves the
previous file intact. ``last.pt`` is a hard link to the newest ``step{N}.pt``
(a copy where links are not supported). Tensors and plain containers only:
files load with ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lsnmt.io import atomic_write

STEP_RE = re.compile(r"^step(\d+)\.pt$")


def save(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` atomically (temporary file + fsync + ``os.replace``)."""
    with atomic_write(path, "wb", encoding=None) as fh:
        torch.save(state, fh)


HOST_ENTRIES = ("rng",)
"""Entries that stay on the CPU whatever device a checkpoint is loaded onto: torch's and CUDA's
``set_rng_state`` take CPU ``ByteTensor``s (a generator state moved to the GPU cannot be restored)."""


def load(path: Path, device: torch.device | str = "cpu") -> dict[str, Any]:
    """The checkpoint at ``path``, its tensors on ``device`` except :data:`HOST_ENTRIES`, which stay on the CPU."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    if torch.device(device).type == "cpu" or not isinstance(state, dict):
        return state
    return {k: v if k in HOST_ENTRIES else _to(v, torch.device(device)) for k, v in state.items()}


def _to(value: Any, device: torch.device) -> Any:
    """``value`` with every tensor in it (nested dicts, lists, tuples) moved to ``device``."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    return value


def link_or_copy(src: Path, dst: Path) -> None:
    """Make ``dst`` the same file as ``src``, atomically (hard link, else copy, then rename)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".tmp", dir=dst.parent)
    os.close(fd)
    os.unlink(tmp)
    try:
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def remove_partial(work_dir: Path) -> None:
    """Delete temporary files a killed save left behind (``.NAME.pt.*.tmp``)."""
    for tmp in work_dir.glob(".*.pt.*.tmp"):
        tmp.unlink(missing_ok=True)


def step_checkpoints(work_dir: Path) -> list[tuple[int, Path]]:
    """``[(N, work_dir/stepN.pt)]`` in increasing N."""
    found = [(int(m.group(1)), p) for p in work_dir.glob("step*.pt") if (m := STEP_RE.match(p.name))]
    return sorted(found)


def prune(work_dir: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest step checkpoints."""
    ckpts = step_checkpoints(work_dir)
    for _, path in ckpts[:max(0, len(ckpts) - keep)]:
        path.unlink(missing_ok=True)


def average(paths: Sequence[Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of the ``model`` entries of ``paths`` (fairseq ``scripts/average_checkpoints.py``).

    ``theta = (1/K) sum_k theta_k`` for floating tensors (summed in float64, cast
    back); integer buffers are floor-divided as fairseq does.
    """
    if not paths:
        raise ValueError("average needs at least one checkpoint")
    total: dict[str, torch.Tensor] = {}
    dtypes: dict[str, torch.dtype] = {}
    for path in paths:
        model = load(path)["model"]
        if total and model.keys() != total.keys():
            raise ValueError(f"{path}: parameters differ from {paths[0]}")
        for k, v in model.items():
            dtypes[k] = v.dtype
            v = v.double() if v.is_floating_point() else v.long()
            total[k] = total[k] + v if k in total else v.clone()
    n = len(paths)
    return {k: (v / n if v.is_floating_point() else v // n).to(dtypes[k]) for k, v in total.items()}


def rng_state() -> dict[str, Any]:
    """Every generator the training loop may draw from."""
    np_state = np.random.get_state()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": [np_state[0], torch.from_numpy(np_state[1].astype(np.int64)), *np_state[2:]],
        "python": random.getstate(),
    }


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore :func:`rng_state`'s generators (states found on another device are brought to the CPU first)."""
    torch.set_rng_state(state["torch"].cpu())
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda"]])
    name, keys, *rest = state["numpy"]
    np.random.set_state((name, keys.cpu().numpy().astype(np.uint32), *rest))
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
