"""File helpers shared by every stage: atomic writes and strict line reading.

Two rules hold everywhere in the project:

* Outputs are written to a temporary sibling and renamed into place, so an
  interrupted stage never leaves a half-written file behind. They get the
  permissions of a plain ``open`` (``0o666 & ~umask``; directories ``0o777 & ~umask``),
  not ``mkstemp``'s private 0600, so a group sharing results can read them.
* Text is split on ``\\n`` only. ``str.splitlines()`` also breaks on U+0085,
  U+2028 and friends, which would silently misalign parallel files (Tatoeba's
  Polish test set has a U+0085 on line 5374).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


class DataError(ValueError):
    """Bad input data: the message names the file (and line) at fault."""


class Interrupted(RuntimeError):
    """Training stopped on a signal after saving ``last.pt``; running again resumes (``lsnmt.train.loop``; a stage
    exits ``128 + signal``: ``lsnmt.cli.guarded``)."""

    def __init__(self, signum: int, step: int) -> None:
        super().__init__(
            f"stopped by {signal.Signals(signum).name} after update {step}; "
            "checkpoint saved, the next run resumes from it"
        )
        self.signum, self.step = signum, step


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
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Build a directory under a temporary name; swap it onto ``path`` on success only."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
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
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
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
