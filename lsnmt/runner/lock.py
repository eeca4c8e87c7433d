"""One writer per job: a stage holds ``work/locks/{experiment}/{stage}[@{job}].lock`` while it runs.

Two runs of one job (two ``train`` of one method, a ``dvc repro`` beside a ``snakemake``, a requeued SLURM job
starting on another node while the old one still runs) would write the same checkpoints and outputs at once (two
trainings interleaved ``curve.tsv``: 44 rows instead of 25). The lock holds across the nodes of a cluster that
share the repository over NFS or Lustre, where ``flock`` may be local to a node or missing, so it uses none:

- **taking it** links a file holding this run's record (:mod:`lsnmt.runner.heartbeat`: pid, host, start, heartbeat,
  id) to the lock's path: ``link`` is atomic and fails when the path exists, on NFS v2-v4 and Lustre alike (the
  recipe of open(2)'s ``O_EXCL`` notes; a lost reply is recognised by the link count). An empty file is a free lock;
- **a second run** of the job stops at once with one line naming the holder (:class:`Busy`, exit 75);
- **a dead holder** is recognised and its lock taken over with a warning: its keeper marked it ``ended``, or it ran
  on this host and its pid is gone (or reused), or on another host and its heartbeat is older than
  :func:`timeout` (``LSNMT_LOCK_TIMEOUT`` seconds, default 120). A stale lock is set aside by ``rename`` (one run
  wins), checked again, and removed, or put back when it turned out alive;
- **while the stage runs** a keeper process refreshes the heartbeat every ``timeout / 8`` seconds, also across the
  ``exec`` of ``torchrun`` (:func:`before_exec`), whose ranks take no lock of their own;
- **at the end** (a clean end, an exception, SIGTERM) :func:`release` empties the file; a stage killed outright
  leaves it to its keeper.

Where no lock file can be made (no hard links: some FUSE and SMB mounts) the run goes on unlocked, with a warning.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from lsnmt.runner import heartbeat

log = logging.getLogger(__name__)

ROOT = Path("work/locks")
"""Where the lock files live, relative to the repository (the stages' working directory)."""
TIMEOUT = 120.0
"""Seconds without a heartbeat after which a holder on another host counts as dead (``LSNMT_LOCK_TIMEOUT``)."""
ATTEMPTS = 8
"""Tries at taking a lock that other runs are taking over at the same moment, before :class:`Busy`."""
NO_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS)
"""``link``'s errors on a file system without hard links."""


class Busy(RuntimeError):
    """The job is already running; the message names the running one."""


@dataclass(frozen=True)
class Record:
    """What a lock file says (``text`` empty: free; the other fields ``None`` where it does not say)."""

    text: str
    mtime: float
    pid: int | None = None
    host: str | None = None
    since: str | None = None
    beat: float | None = None
    ended: bool = False

    @property
    def who(self) -> str:
        """``pid N on HOST since DATE``, as the messages name the holder."""
        if self.pid is None:
            return f"an unreadable record ({self.text[:80]!r})"
        return f"pid {self.pid} on {self.host} since {self.since}"

    @property
    def age(self) -> float:
        """Seconds since the last heartbeat (the file's change where the record has none: an older version's)."""
        return time.time() - (self.beat if self.beat is not None else self.mtime)


@dataclass
class Held:
    """A lock this process holds: the file's descriptor, the keeper and the write end of its pipe."""

    path: Path
    fd: int
    pipe: int
    keeper: subprocess.Popen


_HELD: list[Held] = []
"""The locks this process holds (:func:`before_exec` hands them to the program it becomes)."""


def path_of(stage: str, experiment: str, job: str | None = None) -> Path:
    """The lock file of one job: ``work/locks/{experiment}/{stage}[@{job}].lock``."""
    return ROOT / experiment / (f"{stage}@{job}.lock" if job else f"{stage}.lock")


def timeout() -> float:
    """``LSNMT_LOCK_TIMEOUT`` as a positive number of seconds, else :data:`TIMEOUT`."""
    try:
        value = float(os.environ.get("LSNMT_LOCK_TIMEOUT", ""))
    except ValueError:
        return TIMEOUT
    return value if value > 0 else TIMEOUT


def acquire(path: Path, what: str) -> Held | None:
    """Hold the lock ``path`` for this process (and what it ``exec``s after :func:`before_exec`); ``None``: no
    lock on this file system. Raises :class:`Busy` naming the holder when a live run holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    holder = f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}"
    ident = os.urandom(6).hex()
    for _ in range(ATTEMPTS):
        try:
            _link(path, heartbeat.line(holder, time.time(), ident))
        except FileExistsError:
            current = _read(path)
            if current is not None and current.text and _dead(current) is None:
                raise Busy(
                    f"{what} is already running ({current.who}, last heartbeat {current.age:.0f} s ago; lock {path}): "
                    "wait for it to end, or stop it, before starting it again"
                ) from None
            if (broken := _break(path)) and broken[0].text:
                log.warning("%s: held by %s, which %s; taking it over", path, broken[0].who, broken[1])
            continue
        except OSError as exc:
            if exc.errno not in NO_LINKS:
                raise
            log.warning("%s: cannot lock (%s): a second run of %s would not be stopped", path, exc.strerror, what)
            return None
        return _keep(path, holder, ident)
    raise Busy(f"{what}: other runs are taking lock {path} at this moment; start it again later")


def before_exec() -> None:
    """This process is about to ``exec`` another program (``torchrun``): its locks stay held until that ends."""
    for held in _HELD:
        _tell(held, b"exec\n")
        os.set_inheritable(held.pipe, True)


def release(held: Held | None) -> None:
    """Stop the keeper and empty the record (a run that ends without this leaves its record, marked ``ended``)."""
    if held is None:
        return
    _HELD.remove(held)
    _tell(held, b"done\n")  # first, so that no heartbeat rewrites the record after it is emptied
    os.close(held.pipe)
    try:
        held.keeper.wait(timeout=10)
    except subprocess.TimeoutExpired:
        held.keeper.kill()
        held.keeper.wait()
    try:
        os.ftruncate(held.fd, 0)  # this run's own file: a lock taken over since then is another file
        os.fsync(held.fd)
    except OSError as exc:  # NFS: ESTALE, the file removed by a run that took the lock over
        log.warning("%s: cannot clear the record (%s)", held.path, exc.strerror)
    finally:
        os.close(held.fd)


def _tell(held: Held, word: bytes) -> None:
    try:
        os.write(held.pipe, word)
    except BrokenPipeError:  # the keeper is gone (killed): the heartbeat has stopped
        log.warning("%s: its heartbeat keeper has ended", held.path)


def _link(path: Path, record: bytes) -> None:
    """Make ``path`` hold ``record`` unless it exists (``FileExistsError``), through a unique file and ``link``."""
    tmp = path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        try:
            os.write(fd, record)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except OSError:
            if os.stat(tmp).st_nlink != 2:  # NFS: the link was made but its reply was lost
                raise
    finally:
        tmp.unlink()


def _keep(path: Path, holder: str, ident: str) -> Held:
    """Open the lock just taken and start its keeper (:mod:`lsnmt.runner.heartbeat`)."""
    fd = os.open(path, os.O_RDWR)
    read, write = os.pipe()
    args = [str(x) for x in (fd, read, os.getpid(), timeout() / 8, path, holder, ident)]
    try:
        keeper = subprocess.Popen(
            [sys.executable, "-I", "-S", heartbeat.__file__, *args],
            pass_fds=(fd, read),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
    except BaseException:
        os.ftruncate(fd, 0)
        for x in (fd, read, write):
            os.close(x)
        raise
    os.close(read)
    held = Held(path, fd, write, keeper)
    _HELD.append(held)
    return held


def _read(path: Path) -> Record | None:
    """The record at ``path`` (``None``: no file); a torn read (a heartbeat written at that moment) is read again."""
    for attempt in range(3):
        try:
            fd = os.open(path, os.O_RDONLY)  # a fresh open: NFS revalidates the file (close-to-open)
        except FileNotFoundError:
            return None
        try:
            text, mtime = os.read(fd, 4096).decode("utf-8", "replace").strip(), os.fstat(fd).st_mtime
        finally:
            os.close(fd)
        match = heartbeat.RECORD.fullmatch(text)
        if match or not text or attempt == 2:
            break
        time.sleep(0.05)
    if not match:
        return Record(text, mtime)
    beat = float(match["beat"]) if match["beat"] else None
    pid, ended = int(match["pid"]), match["state"] == "ended"
    return Record(text, mtime, pid=pid, host=match["host"], since=match["since"], beat=beat, ended=ended)


def _dead(rec: Record) -> str | None:
    """Why the holder of ``rec`` is dead (the end of the takeover warning), ``None`` when it may be alive."""
    killed = "ended without clearing it (killed?)"
    if rec.ended:
        return killed
    if rec.pid is not None and rec.host == socket.gethostname():
        return None if _alive(rec.pid, rec.since) else killed
    if rec.age <= timeout():
        return None
    lost = f"sent no heartbeat for {rec.age:.0f} s (LSNMT_LOCK_TIMEOUT: {timeout():.0f} s)"
    return f"{lost}: its node died, or lost the file system"


def _alive(pid: int, since: str | None) -> bool:
    """Whether ``pid`` runs on this host and started no later than ``since`` (else the pid was reused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    started = _start_time(pid)
    if started is None or since is None:
        return True
    return started <= time.mktime(time.strptime(since, "%Y-%m-%d %H:%M:%S")) + 1


def _start_time(pid: int) -> float | None:
    """When ``pid`` started (seconds since the epoch), from ``/proc``; ``None`` where there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
    except (OSError, StopIteration):
        return None
    ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, starttime, after "pid (comm)"
    return int(boot.split()[1]) + ticks / os.sysconf("SC_CLK_TCK")


def _break(path: Path) -> tuple[Record, str] | None:
    """Remove the free or dead lock at ``path`` and return its record and why it was dead; ``None`` when it was
    gone, or alive after all (a run took it over between the caller's reading and this: it is put back)."""
    aside = path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}.stale")
    try:
        os.rename(path, aside)  # atomic: of several runs breaking one lock, one moves it
    except FileNotFoundError:
        if not aside.exists():  # NFS: the rename was made but its reply was lost
            return None
    try:
        rec = _read(aside)
        if rec is None:
            return None
        why = _dead(rec) if rec.text else ""
        if why is not None:
            return rec, why
        try:
            os.link(aside, path)  # the same file back, so that its keeper goes on beating it
        except OSError:
            log.warning("%s: a live lock (%s) was set aside and could not be put back", path, rec.who)
        return None
    finally:
        aside.unlink(missing_ok=True)
