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

**Checksums.** :func:`save` stores, under the key ``sha256``, the digest of everything else in the file
(:func:`lsnmt.train.digest.state_digest`: every tensor's dtype, shape and bytes, every other value), inside the
file itself, so that it is written atomically with it and travels with it (``model.pt`` through DVC's cache or a
remote). :func:`load` recomputes it and refuses a file that does not load or whose digest differs with
:class:`Damaged`, one line naming the file and what to do (a bit flipped in a tensor loads, and would otherwise
resume or translate silently with other weights). :func:`resume` falls back from a damaged ``last.pt`` to the
newest intact ``step{N}.pt``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import random
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lsnmt.io import DataError, atomic_write
from lsnmt.train.digest import state_digest

log = logging.getLogger(__name__)

STEP_RE = re.compile(r"^step(\d+)\.pt$")
DIGEST = "sha256"
"""The key under which :func:`save` stores the digest of the rest of the checkpoint (:func:`load` removes it)."""


class Damaged(DataError):
    """A checkpoint that does not load, or whose content differs from what was written; the message (one line)
    names the file and what to do."""


def save(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` and its digest (key :data:`DIGEST`) to ``path`` atomically (temporary file + fsync +
    ``os.replace``)."""
    with atomic_write(path, "wb", encoding=None) as fh:
        torch.save({**state, DIGEST: state_digest(state)}, fh)


HOST_ENTRIES = ("rng",)
"""Entries that stay on the CPU whatever device a checkpoint is loaded onto: torch's and CUDA's
``set_rng_state`` take CPU ``ByteTensor``s (a generator state moved to the GPU cannot be restored)."""


def load(path: Path, device: torch.device | str = "cpu", *,
         remedy: str = "rerun the stage that writes it") -> dict[str, Any]:
    """The checkpoint at ``path``, verified on the CPU, its tensors then on ``device`` except :data:`HOST_ENTRIES`,
    which stay on the CPU. Raises :class:`Damaged` (``remedy``: what the message tells the user to do) when the
    file does not load or its digest differs; a file written before digests were stored loads with a warning."""
    state = _verified(Path(path), remedy)
    if torch.device(device).type == "cpu":
        return state
    return {k: v if k in HOST_ENTRIES else _to(v, torch.device(device)) for k, v in state.items()}


def _verified(path: Path, remedy: str) -> dict[str, Any]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except pickle.UnpicklingError as exc:
        lines = [x.strip() for x in str(exc).splitlines() if x.strip()]  # torch's first line advises False
        reason = next((x for x in lines if "GLOBAL" in x or "nsupported" in x), lines[-1] if lines else "")
        raise Damaged(f"{path}: not a plain checkpoint of tensors, refused ({reason}); {remedy}") from None
    except Exception as exc:  # torch.load's many ways to fail on a truncated or altered file
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise Damaged(f"{path}: damaged, it does not load ({type(exc).__name__}: {first}); {remedy}") from None
    if not isinstance(state, dict):
        raise Damaged(f"{path}: not a checkpoint (a {type(state).__name__}, not a mapping); {remedy}")
    stored = state.pop(DIGEST, None)
    if stored is None:
        log.warning("%s: written without a checksum (before checksums were stored): loaded unverified", path)
    elif stored != state_digest(state):
        raise Damaged(f"{path}: damaged, its content differs from what was written (sha256 mismatch); {remedy}")
    return state


def resume(work_dir: Path, device: torch.device | str = "cpu") -> tuple[Path, dict[str, Any]] | None:
    """The newest intact checkpoint of ``work_dir`` to resume from, and its path: ``last.pt``, else (damaged) the
    ``step{N}.pt`` files, newest first; ``None`` when there is none. Raises :class:`Damaged` when every one is
    damaged. Reads only, so that every rank of a run picks the same file."""
    candidates = [work_dir / "last.pt", *(p for _, p in reversed(step_checkpoints(work_dir)))]
    damaged: list[Damaged] = []
    bad_files: set[tuple[int, int]] = set()
    for path in candidates:
        if not path.is_file() or _file_id(path) in bad_files:  # last.pt is a hard link to a step file
            continue
        try:
            state = load(path, device, remedy="trying the previous checkpoint")
        except Damaged as exc:
            log.warning("%s", exc)
            damaged.append(exc)
            bad_files.add(_file_id(path))
            continue
        if damaged:
            log.warning("resuming from %s, the newest intact checkpoint of %s", path.name, work_dir)
        return path, state
    if damaged:
        raise Damaged(f"{str(damaged[0]).rsplit(';', 1)[0]}, and no intact step checkpoint is left to resume from: "
                      f"delete {work_dir} to train afresh")
    return None


def _file_id(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino


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
        model = load(path, remedy=f"delete {path.parent} to train afresh")["model"]
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
