"""One writer per job: a stage holds ``work/locks/{experiment}/{stage}[@{job}].lock`` while it runs.

Two runs of one job in one repository (two ``train`` of one method, a ``dvc repro`` beside a ``snakemake``)
would write the same checkpoints and outputs at once (two trainings interleaved ``curve.tsv``: 44 rows instead
of 25). The lock is an exclusive ``flock`` on the file, which the kernel releases when the process ends however
it ends, so a lock cannot outlive its run; the file records who holds it (pid, host, start), for the message
that stops a second run at once (:class:`Busy`). A run that finds the record of a run that ended without clearing
it (killed) says so and takes the lock over.

The descriptor is inherited across ``exec``: ``stages.train`` replaces itself by ``torchrun``, which keeps the
lock for its ranks (a rank, ``WORLD_SIZE`` set, takes none). Where the file system has no ``flock`` (a Lustre
mount without the ``flock`` option) the run goes on unlocked, with a warning.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import socket
import time
from pathlib import Path

log = logging.getLogger(__name__)

ROOT = Path("work/locks")
"""Where the lock files live, relative to the repository (the stages' working directory)."""


class Busy(RuntimeError):
    """The job is already running; the message names the running one."""


def path_of(stage: str, experiment: str, job: str | None = None) -> Path:
    """The lock file of one job: ``work/locks/{experiment}/{stage}[@{job}].lock``."""
    return ROOT / experiment / (f"{stage}@{job}.lock" if job else f"{stage}.lock")


def acquire(path: Path, what: str) -> int | None:
    """Hold the lock ``path`` for this process (and what it ``exec``s); return its descriptor (``None``: no lock
    on this file system). Raises :class:`Busy` naming the holder when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = _record(fd)
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise Busy(f"{what} is already running ({holder or 'holder unknown'}; lock {path}): wait for it to "
                       "end, or stop it, before starting it again") from None
        log.warning("%s: cannot lock (%s): a second run of %s would not be stopped", path, exc.strerror, what)
        return None
    if stale := _record(fd):
        log.warning("%s: held by %s, which ended without clearing it (killed?); taking it over", path, stale)
    os.ftruncate(fd, 0)
    # At offset 0: reading a stale record moved the offset past it, and a write there left NUL bytes before ours.
    os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
              .encode(), 0)
    os.set_inheritable(fd, True)
    return fd


def release(fd: int | None) -> None:
    """Clear the record and give the lock back (a run that ends without this leaves its record: stale)."""
    if fd is None:
        return
    try:
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def _record(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 4096).decode("utf-8", "replace").strip()
