"""What every source kind shares: its catalogue entry and the context it writes the raw layout through.

A kind's ``build(ctx)`` asks :meth:`Context.obtain` for a local copy of each file
it needs (``path:`` first, then the download cache, honouring ``url:``,
``sha256:`` and ``mirror:``) and writes lines with :meth:`Context.copy` /
:meth:`Context.append`, which apply ``max_pairs`` and remember where every
output file came from (for ``raw/MANIFEST.tsv``). Output goes under
``ctx.raw_root``, the temporary directory that ``download`` swaps into place,
so writers simply append.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from lsnmt.data import layout
from lsnmt.data.config import ROOT, DataConfig, DownloadConfig, SourceConfig
from lsnmt.data.fetch import basename, check_digests, fetch, file_digests, resolve_source
from lsnmt.data.sources.archive import extract_member, index_dir, is_archive
from lsnmt.io import DataError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Remote:
    """One downloadable file: its URL and the checksums published for it (``None``: none published)."""

    url: str
    sha256: str | None = None
    md5: str | None = None
    alt_names: tuple[str, ...] = ()
    """Other names of the same content, looked for inside a user's ``path`` (e.g. a .tgz for a .zip)."""
    cache_name: str | None = None
    """Its name in the download cache and in a user's ``path`` directory when the URL's basename is ambiguous
    (WMT14's and WMT15's ``wiki-titles.tgz``; OPUS's ``de-en.txt.zip`` of every corpus)."""
    gone: str | None = None
    """Why ``url`` no longer serves the file and what a user must fetch instead (one line); without ``path:`` or
    ``mirror:`` the source stops with it before any download."""

    @property
    def name(self) -> str:
        return self.cache_name or basename(self.url)


@dataclass(frozen=True)
class Origin:
    """Where an output file's lines were read from."""

    source: str
    """URL or local path actually read."""
    sha256: str
    """sha256 observed for that file (``-`` for a directory)."""
    check: str
    """What was verified against a published value: ``sha256``, ``md5`` or ``none``."""


@dataclass(frozen=True)
class Source:
    """A row of the source catalogue: how to turn one corpus into the raw layout."""

    kind: str
    summary: str
    splits: frozenset[str]
    """Splits the kind can provide."""
    build: Callable[[Context], None]
    remotes: tuple[Remote, ...] = ()
    """The files it downloads (empty where the names are generated, e.g. mC4 shards)."""
    monolingual: bool = False
    """Its ``mw.{lang}`` files are independent monolingual text, not aligned line by line."""
    nested: bool = False
    """A user ``path`` may be an outer archive that contains the catalogue file (IWSLT releases)."""


def pair_key(a: str, b: str, pivot: str) -> tuple[str, str]:
    """How the raw layout names the pair of ``a`` and ``b``: pivot first, else alphabetical."""
    if b == pivot:
        return b, a
    if a == pivot:
        return a, b
    return (a, b) if a < b else (b, a)


@dataclass
class Context:
    """One source being materialized into ``raw_root``."""

    src: SourceConfig
    data: DataConfig
    raw_root: Path
    cache_dir: Path
    dl: DownloadConfig
    source: Source
    origins: dict[Path, list[Origin]] = field(default_factory=dict)
    counts: dict[Path, int] = field(default_factory=dict)
    _index: dict[str, Path] | None = None

    @property
    def languages(self) -> tuple[str, ...]:
        return self.src.languages or self.data.languages

    @property
    def splits(self) -> tuple[str, ...]:
        return self.src.splits

    def pairs(self, split: str) -> list[tuple[str, str]]:
        """Pairs (raw-layout order) this source should provide for ``split``, from the experiment's directions."""
        directions = self.data.train_pairs if split == "train" else self.data.eval_pairs
        langs, out = set(self.languages), []
        for s, t in directions:
            key = pair_key(s, t, self.data.pivot)
            if s in langs and t in langs and key not in out:
                out.append(key)
        return out

    def bitext(self, split: str, a: str, b: str) -> tuple[Path, Path]:
        return layout.bitext(self.raw_root, split, self.src.name, a, b)

    def multiway(self, split: str, lang: str) -> Path:
        return layout.multiway(self.raw_root, split, self.src.name, lang)

    def missing(self, split: str, what: str) -> None:
        """Note that this source has no ``split`` data for ``what`` (download checks what is required)."""
        log.warning("%s (%s): no %s data for %s", self.src.name, self.src.kind, split, what)

    # -- obtaining files ---------------------------------------------------------------------------------

    def obtain(self, remote: Remote) -> tuple[Path, Origin]:
        """A local copy of ``remote`` (file, or directory holding its extracted content) and where it came from."""
        url, expected = self._target(remote)
        if self.src.path:
            return self._from_path(remote, expected)
        if remote.gone and not self.src.mirror and url == remote.url:
            raise DataError(f"source {self.src.name!r}: {remote.gone}")
        dest = self.cache_dir / self.src.kind / (remote.name if url == remote.url else basename(url))
        fetch(url, dest, sha256=expected.get("sha256"), md5=expected.get("md5"), mirror=self.src.mirror,
              retries=self.dl.retries, timeout=self.dl.timeout)
        digests = file_digests(dest, remember=True)
        return dest, Origin(resolve_source(url, self.src.mirror), digests["sha256"], _check(expected))

    def _target(self, remote: Remote) -> tuple[str, dict[str, str]]:
        """The URL to read and the checksums it must match, after ``url:`` / ``sha256:`` overrides."""
        if (self.src.url or self.src.sha256) and len(self.source.remotes) != 1:
            raise DataError(f"source {self.src.name!r}: url:/sha256: name one archive, but kind {self.src.kind!r} "
                            "reads several files; use mirror: (a directory or base URL) or path: instead")
        url = self.src.url or remote.url
        if self.src.sha256:
            return url, {"sha256": self.src.sha256.lower()}
        if url != remote.url:
            log.warning("%s: %s replaces the catalogue URL; without sha256: it is not verified", self.src.name, url)
            return url, {}
        return url, {a: v for a, v in (("sha256", remote.sha256), ("md5", remote.md5)) if v}

    def _from_path(self, remote: Remote, expected: dict[str, str]) -> tuple[Path, Origin]:
        """Resolve ``remote`` against the user's ``path:`` (a file, an outer archive, or a directory)."""
        root = ROOT / self.src.path  # an absolute path stays absolute
        names = (remote.name, *remote.alt_names)
        if root.is_dir():
            if self._index is None:
                self._index = index_dir(root)
            found = next((self._index[n] for n in names if n in self._index), None)
            if found is None:  # already extracted: the kind looks for its members inside the directory
                return root, Origin(_shown(root), "-", "none")
            return found, self._verified(found, expected if found.name == remote.name or self.src.sha256 else {})
        if root.name in names or (len(self.source.remotes) == 1 and not self.source.nested):
            return root, self._verified(root, expected if root.name == remote.name or self.src.sha256 else {})
        if self.source.nested and is_archive(root):
            inner = self._inner(root, names)
            if inner is not None:
                return inner, Origin(f"{_shown(root)}!{inner.name}", file_digests(inner)["sha256"], "none")
        return root, self._verified(root, {})

    def _verified(self, path: Path, expected: dict[str, str]) -> Origin:
        digests = check_digests(path, expected, str(path))
        if not expected:
            log.info("%s: using %s as given (sha256 %s, not verified)", self.src.name, path, digests["sha256"])
        return Origin(_shown(path), digests["sha256"], _check(expected))

    def _inner(self, outer: Path, names: tuple[str, ...]) -> Path | None:
        """Extract the first of ``names`` found inside ``outer`` into the cache."""
        st = outer.stat()
        dest_dir = self.cache_dir / self.src.kind / f"from-{outer.name}-{st.st_size}-{st.st_mtime_ns}"
        for name in names:
            if (dest_dir / name).is_file() or extract_member(outer, name, dest_dir / name):
                return dest_dir / name
        return None

    # -- writing the raw layout ----------------------------------------------------------------------------

    def remaining(self, out: Path) -> int | None:
        """Lines ``out`` may still take under ``max_pairs`` (``None``: no limit)."""
        if self.src.max_pairs is None:
            return None
        return max(self.src.max_pairs - self.counts.get(out, 0), 0)

    def append(self, out: Path, lines: Iterable[bytes], origin: Origin) -> int:
        """Append ``lines`` (bytes without their ``\\n``) to ``out``, at most ``remaining(out)``; return the count."""
        quota = self.remaining(out)
        n = 0
        with self._open(out) as fh:
            for line in lines:
                if quota is not None and n >= quota:
                    break
                fh.write(line + b"\n")
                n += 1
        return self._record(out, n, origin)

    def copy(self, out: Path, fh: BinaryIO, origin: Origin) -> int:
        """Append the lines of a binary stream to ``out`` (split on ``\\n`` only, bytes kept as they are)."""
        if self.remaining(out) is not None:
            return self.append(out, strip_newlines(fh), origin)
        n, last = 0, b"\n"
        with self._open(out) as dst:
            while chunk := fh.read(1 << 20):
                dst.write(chunk)
                n += chunk.count(b"\n")
                last = chunk[-1:]
            if last != b"\n":
                dst.write(b"\n")
                n += 1
        return self._record(out, n, origin)

    def copy_file(self, out: Path, path: Path, origin: Origin) -> int:
        with open(path, "rb") as fh:
            return self.copy(out, fh, origin)

    def _open(self, out: Path) -> BinaryIO:
        """``out`` for appending; the first write of this run truncates it (idempotent re-runs)."""
        out.parent.mkdir(parents=True, exist_ok=True)
        fh = open(out, "ab" if out in self.counts else "wb")  # returned to a with block
        self.counts.setdefault(out, 0)
        return fh

    def _record(self, out: Path, n: int, origin: Origin) -> int:
        self.counts[out] = self.counts.get(out, 0) + n
        known = self.origins.setdefault(out, [])
        if origin not in known:
            known.append(origin)
        return n

    def scratch(self) -> Path:
        """A fresh directory in the cache for extracted members (removed by :meth:`clean_scratch`)."""
        path = self.cache_dir / self.src.kind / f"scratch-{os.getpid()}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path

    def clean_scratch(self) -> None:
        shutil.rmtree(self.cache_dir / self.src.kind / f"scratch-{os.getpid()}", ignore_errors=True)


def strip_newlines(fh: Iterable[bytes]) -> Iterator[bytes]:
    """Lines of a binary stream without their ``\\n`` (binary iteration splits on ``\\n`` only)."""
    for raw in fh:
        yield raw[:-1] if raw.endswith(b"\n") else raw


def _check(expected: dict[str, str]) -> str:
    return next(iter(expected), "none")


def _shown(path: Path) -> str:
    """``path`` as the manifest records it: relative to the repository when inside it (outputs must not depend
    on where the clone lives), else as given."""
    try:
        return str(path.resolve().relative_to(ROOT.resolve()))
    except ValueError:
        return str(path)
