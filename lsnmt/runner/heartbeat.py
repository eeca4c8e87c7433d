"""The record of a job lock (:mod:`lsnmt.runner.lock`) and the small process that keeps its heartbeat.

A lock file holds one line, ``pid 1234 on node07 since 2025-01-01 12:00:00, heartbeat 1735732800.123, id
5f1e2d3c4b5a, alive``; empty, the lock is free. The heartbeat is the holder's clock (``time.time()``), rewritten
in place every few seconds at the same length (so that a reader never finds the file empty or short) and synced
to the file server, where another node reads it. ``ended`` in place of ``alive``: the holder died without
releasing the lock.

The keeper runs as ``python -I -S heartbeat.py ...`` (the standard library only), a child of the stage that holds
the lock. It stays across the stage's ``exec`` of ``torchrun`` (the process keeps its pid and the write end of
the keeper's pipe), so a multi-rank run stays locked until ``torchrun`` ends, and it outlives a stage killed
outright, whose lock it marks ``ended`` at once. It ignores the stop signals (a SLURM job's SIGTERM reaches every
process of the job; the stage still needs its lock while it saves). The stage tells it through the pipe:

- ``done``: the stage released the lock; the keeper exits;
- ``exec``: the stage is replacing itself by another program; at that program's end (the pipe's end of file)
  the keeper releases the lock (empties the file);
- the end of file without either: the stage died; the keeper marks the record ``ended``.

A record with another holder's id at the lock's path while the stage runs (a run on another node judged this one
dead and took the lock over) makes the keeper print one line and send the stage SIGTERM: it saves and stops
rather than write beside the new holder.
"""

from __future__ import annotations

import os
import re
import select
import signal
import sys
import time

RECORD = re.compile(
    r"pid (?P<pid>\d+) on (?P<host>\S+) since (?P<since>[\d-]+ [\d:]+)"
    r"(?:, heartbeat (?P<beat>\d+\.\d+), id (?P<id>[0-9a-f]+), (?P<state>alive|ended))?"
)
"""One record; a record without a heartbeat is an older version's (a ``flock`` held the lock)."""
IGNORED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
"""The keeper outlives these: the stage decides when its lock ends."""


def line(holder: str, beat: float, ident: str, state: str = "alive") -> bytes:
    """The record of ``holder`` (``pid N on HOST since DATE``), one length for ``alive`` and ``ended``."""
    return f"{holder}, heartbeat {beat:.3f}, id {ident}, {state}\n".encode()


def owner(path: str) -> str | None:
    """The id in the record at ``path`` (``None``: no file, an empty or unreadable one)."""
    try:
        with open(path, "rb") as fh:
            match = RECORD.match(fh.read(4096).decode("utf-8", "replace"))
    except OSError:
        return None
    return match["id"] if match else None


def _beat(fd: int, path: str, holder: str, ident: str, pid: int) -> bool:
    """Refresh the heartbeat; ``True`` when another holder has taken the lock (the stage is then told to stop)."""
    other = owner(path)
    if other not in (None, ident):
        print(
            f"lsnmt lock: {path} was taken over (id {other}) while pid {pid} ran; stopping it (SIGTERM) so that "
            "two runs do not write one job",
            file=sys.stderr,
            flush=True,
        )
        os.kill(pid, signal.SIGTERM)
        return True
    try:  # our own inode, at the path or set aside by a run checking it (which then puts it back)
        os.pwrite(fd, line(holder, time.time(), ident), 0)
        os.fsync(fd)
    except OSError:  # the server away for a moment: the next beat tries again
        pass
    return False


def keep(fd: int, pipe: int, pid: int, interval: float, path: str, holder: str, ident: str) -> None:
    """Beat every ``interval`` seconds until the stage says ``done`` or its pipe ends (module docstring)."""
    mode, lost = "run", False
    while mode != "done":
        ready, _, _ = select.select([pipe], [], [], interval)
        if not ready:
            lost = lost or _beat(fd, path, holder, ident, pid)
            continue
        said = os.read(pipe, 64)
        if not said:
            break
        mode = "done" if b"done" in said else "exec" if b"exec" in said else mode
    if mode == "done" or lost or owner(path) != ident:
        return
    try:
        if mode == "exec":  # the program the stage became (torchrun) has ended
            os.ftruncate(fd, 0)
        else:  # the stage died without releasing it
            os.pwrite(fd, line(holder, time.time(), ident, "ended"), 0)
        os.fsync(fd)
    except OSError:  # NFS: ESTALE, removed meanwhile by a run that took it over
        pass


def main(argv: list[str]) -> None:
    """``heartbeat.py FD PIPE PID INTERVAL PATH HOLDER ID`` (started by :func:`lsnmt.runner.lock.acquire`)."""
    for sig in IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    fd, pipe, pid = (int(x) for x in argv[:3])
    keep(fd, pipe, pid, float(argv[3]), argv[4], argv[5], argv[6])


if __name__ == "__main__":
    main(sys.argv[1:])
