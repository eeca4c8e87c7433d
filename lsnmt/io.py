"""File helpers shared by every stage: atomic writes and strict line reading.

Two rules hold everywhere in the project:

* Outputs are written to a temporary sibling and renamed into place, so an
  interrupted stage never leaves a half-written file behind. They get the
  permissions of a plain ``open`` (``0o666 & ~umask``; directories ``0o777 & ~umask``),
  not ``mkstemp``'s private 0600, so a group sharing results can read them.
  The temporary siblings a killed writer of the same path left (``.NAME.XXXXXXXX.tmp``,
  a whole copy of the data for a stage's folder) are removed when the path is
  written next: one writer per path, which the stage lock guarantees
  (:mod:`lsnmt.runner.lock`). A full disk is one :class:`DiskFull` line naming the path
  and the space left.
* Text is split on ``\\n`` only. ``str.splitlines()`` also breaks on U+0085,
  U+2028 and friends, which would silently misalign parallel files (Tatoeba's
  Polish test set has a U+0085 on line 5374).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class DataError(ValueError):
    """Bad input data: the message names the file (and line) at fault."""


class DiskFull(DataError):
    """No space left where an output is written: the message names the path and the space left."""

    @classmethod
    def at(cls, path: str | Path) -> DiskFull:
        try:
            free = f"{shutil.disk_usage(Path(path).parent).free / 2**20:.1f} MiB free on its file system"
        except OSError:
            free = "its file system is full"
        return cls(f"{path}: no space left on the device ({free}); free some space and run the stage again")


FULL = (errno.ENOSPC, errno.EDQUOT)
"""``OSError`` numbers of a full device or an exhausted quota."""


def is_disk_full(exc: BaseException, where: str | Path) -> bool:
    """Whether ``exc``, raised writing under ``where``, is a full disk: an ``OSError`` :data:`FULL` in its chain,
    or an error of a writer that hides it (``torch.save``'s ``RuntimeError``) with less than 1 MiB left there."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in FULL:
            return True
        seen = seen.__cause__ or seen.__context__
    if not isinstance(exc, RuntimeError):
        return False
    try:
        return shutil.disk_usage(where).free < 2**20
    except OSError:
        return False


def remove_stale(path: Path) -> None:
    """Delete the temporary siblings of ``path`` that a killed :func:`atomic_write` / :func:`atomic_dir` left:
    ``.NAME.XXXXXXXX.tmp`` (``tempfile``'s 8 random characters) and ``.NAME.old``."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp")
    for old in path.parent.glob(f".{glob_escape(path.name)}.*"):
        if pattern.fullmatch(old.name) or old.name == f".{path.name}.old":
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)


def glob_escape(name: str) -> str:
    """``name`` with the glob metacharacters ``* ? [`` made literal."""
    return re.sub(r"([*?[])", r"[\1]", name)


def umask() -> int:
    """The process's umask: read from ``/proc/self/status`` where it is there, else set and restored at once."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; rename it onto ``path`` on success only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~umask())
    os.close(fd)
    try:
        kwargs = {"encoding": encoding, "newline": "\n"} if "b" not in mode else {}
        with open(tmp, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, Exception) and not isinstance(exc, DataError) and is_disk_full(exc, path.parent):
            raise DiskFull.at(path) from None
        raise


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Build a directory under a temporary name; swap it onto ``path`` on success only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        tmp.chmod(0o777 & ~umask())
        yield tmp
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            path.rename(old)
            tmp.rename(path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(path)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, Exception) and not isinstance(exc, DataError) and is_disk_full(exc, path.parent):
            raise DiskFull.at(path) from None
        raise


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as sorted, indented JSON, atomically (stable bytes for DVC)."""
    with atomic_write(path) as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")


def iter_lines(path: str | Path, *, errors: str = "strict", counter: list[int] | None = None) -> Iterator[str]:
    """Yield the lines of a UTF-8 file without their ``\\n``, splitting on ``\\n`` only.

    ``errors="strict"`` raises :class:`DataError` naming the file and line of the
    first invalid byte sequence; ``errors="replace"`` substitutes U+FFFD and adds
    the number of lines repaired to ``counter[0]`` when a counter is given.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            raw = raw.rstrip(b"\n").removesuffix(b"\r")
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if errors != "replace":
                    raise DataError(f"{path}:{lineno}: invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
                if counter is not None:
                    counter[0] += 1
                yield raw.decode("utf-8", errors="replace")


def count_lines(path: str | Path) -> int:
    """Number of ``\\n``-terminated lines (a final unterminated line counts too)."""
    n, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


def check_parallel(a: str | Path, b: str | Path) -> int:
    """Return the common line count of two parallel files, or raise naming both counts."""
    na, nb = count_lines(a), count_lines(b)
    if na != nb:
        raise DataError(f"parallel files differ in length: {a} has {na} lines, {b} has {nb} lines")
    return na
