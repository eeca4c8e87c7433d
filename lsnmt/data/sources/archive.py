"""Reading corpus releases: members of tar / zip archives or extracted directories, and WMT/IWSLT segments.

Members are matched by *basename* (``opus.de-en-train.de``), so the same code
reads the official archive, a re-packed one, or a directory the user already
extracted. Tar archives are streamed (``r|*``): a multi-GB release is read
once, front to back, and never unpacked to disk.

Nothing escapes: only regular members are read (never a tar symlink or hard link),
and they are written under their basename into the folder asked for, so a member
called ``../../x`` or ``/etc/x`` lands as ``x`` there. In a directory, a symbolic
link that leads outside it is refused (:func:`inside`).
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import zipfile
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from lsnmt.io import DataError, atomic_write

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip")


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


def inside(path: Path, root: Path) -> Path:
    """``path``, once checked to resolve inside ``root``: a source reads only below the folder params.yaml names,
    so a symbolic link that leads out of it raises :class:`DataError`."""
    real = path.resolve()
    if not real.is_relative_to(root.resolve()):
        raise DataError(f"{path}: a symbolic link to {real}, outside {root}; refused (copy the file in instead)")
    return path


def index_dir(root: Path) -> dict[str, Path]:
    """Basename -> path of every file below ``root`` (first in sorted walk order wins; linked folders are not
    entered, linked files must stay inside ``root``)."""
    out: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            out.setdefault(name, inside(path, root) if path.is_symlink() else path)
    return out


def members(location: Path, names: Collection[str]) -> Iterator[tuple[str, BinaryIO]]:
    """Yield ``(basename, binary stream)`` for each file of ``location`` whose basename is in ``names``.

    ``location`` is a directory, a tar/zip archive, or a plain file (matched by its own
    name). Each name is yielded at most once; reading stops when all were found.
    Consume each stream before asking for the next one (tar streams are sequential).
    """
    wanted = set(names)
    if location.is_dir():
        index = index_dir(location)
        for name in sorted(wanted & index.keys()):
            with open(index[name], "rb") as fh:
                yield name, fh
    elif location.name.lower().endswith(".zip"):
        yield from _zip_members(location, wanted)
    elif is_archive(location):
        yield from _tar_members(location, wanted)
    elif location.name in wanted:
        with open(location, "rb") as fh:
            yield location.name, fh


def _zip_members(path: Path, wanted: set[str]) -> Iterator[tuple[str, BinaryIO]]:
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            name = info.filename.rstrip("/").rsplit("/", 1)[-1]
            if not info.is_dir() and name in wanted:
                wanted.discard(name)
                with zf.open(info) as fh:
                    yield name, fh  # type: ignore[misc]
                if not wanted:
                    return


def _tar_members(path: Path, wanted: set[str]) -> Iterator[tuple[str, BinaryIO]]:
    with tarfile.open(path, "r|*") as tf:
        for info in tf:
            name = info.name.rstrip("/").rsplit("/", 1)[-1]
            if info.isfile() and name in wanted:
                wanted.discard(name)
                fh = tf.extractfile(info)
                assert fh is not None
                yield name, fh
                if not wanted:
                    return


def extract_member(archive: Path, name: str, dest: Path) -> bool:
    """Copy the member called ``name`` of ``archive`` to ``dest``; ``False`` if there is none."""
    for _, fh in members(archive, [name]):
        with atomic_write(dest, "wb") as out:
            shutil.copyfileobj(fh, out, 1 << 20)
        return True
    return False


def extract(location: Path, names: Collection[str], into: Path) -> dict[str, Path]:
    """Copy the members called ``names`` into directory ``into``; return name -> extracted file."""
    into.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for name, fh in members(location, names):
        if Path(name).name != name or name in (".", ".."):
            raise DataError(f"{location}: member name {name!r} is not a plain file name")
        with open(into / name, "wb") as dst:
            shutil.copyfileobj(fh, dst, 1 << 20)
        out[name] = into / name
    return out


_SEG = re.compile(r"<seg[^>]*>(.*)</seg>")


def seg_lines(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Text of the ``<seg>`` lines of a WMT ``.sgm`` or IWSLT ``.xml`` file, one per segment.

    As sacrebleu reads them: regex, not an XML parser (some files are not
    well-formed), entities left as they are, whitespace trimmed and collapsed.
    Invalid UTF-8 bytes pass through unchanged (surrogateescape).
    """
    for raw in lines:
        text = raw.decode("utf-8", "surrogateescape")
        if not text.lstrip().startswith("<seg"):
            continue
        match = _SEG.search(text)
        if match:
            yield re.sub(r"\s+", " ", match.group(1).strip()).encode("utf-8", "surrogateescape")
