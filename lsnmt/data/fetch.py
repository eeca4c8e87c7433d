"""Fetch one file over HTTP(S), or copy it from a local path, resumably and verified.

:func:`fetch` is the only way the ``download`` stage touches the network:

* a partial download is kept as ``dest.part`` and resumed with an HTTP ``Range``
  request (a server that ignores ``Range`` and answers 200 is handled by
  starting over);
* network errors, truncated bodies and 5xx answers are retried with exponential
  back-off; an unreachable host gives a :class:`~lsnmt.io.DataError` that says
  how to point ``params.yaml`` at a local copy instead;
* the file is renamed onto ``dest`` only after its sha256 / md5 matched; on a
  mismatch the partial file is deleted and the error names the URL and both
  checksums;
* ``dest`` that already exists and verifies is reused without any network access.

The digests of a fetched file are remembered in ``dest.digests.json``. A cached
file is hashed again every time it is reused, and compared with the published
checksum or, where there is none, with the digests recorded when it was
fetched: bytes that rotted in the cache (same size, same mtime) are fetched
again, not used (hashing a multi-GB archive takes seconds, the download stage
runs rarely). Right after a fetch, :func:`file_digests` reads them back from
``dest.digests.json`` (keyed by size and mtime) instead of hashing twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import logging
import os
import shutil
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlparse

from tqdm import tqdm

from lsnmt.io import DataError

log = logging.getLogger(__name__)

BACKOFF_S = 1.0
"""First retry delay in seconds; it doubles after every failed attempt (tests set it near zero)."""
CHUNK = 1 << 20
USER_AGENT = "lsnmt-download/0.1 (research data pipeline; urllib)"
ALGOS = ("sha256", "md5")


class _NoConnection(Exception):
    """The host could not be reached at all (DNS, refused, connect timeout)."""


class _Broken(Exception):
    """The host answered but the transfer failed part-way (worth a retry, resuming)."""


def fetch(
    url: str,
    dest: str | Path,
    *,
    sha256: str | None = None,
    md5: str | None = None,
    mirror: str | None = None,
    retries: int = 3,
    timeout: float = 60.0,
    progress: bool = True,
) -> Path:
    """Download ``url`` (or copy a ``file://`` URL / local path) to ``dest`` and return ``dest``.

    ``mirror`` replaces the host: a local directory means ``<mirror>/<basename of url>`` is
    copied, anything else is a base URL that replaces everything before the basename.
    The checksums (hex, case-insensitive) are verified before ``dest`` appears.
    """
    dest = Path(dest)
    source = resolve_source(url, mirror)
    label = url if source == url else f"{url} (via {source})"
    expected = {a: v.lower() for a, v in (("sha256", sha256), ("md5", md5)) if v}
    if dest.exists() and _reusable(dest, expected, label):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    local = local_path(source)
    if local is not None:
        _copy(local, part)
    else:
        _download(source, part, retries=retries, timeout=timeout, progress=progress)
    digests = _verify(part, expected, label)
    part.with_name(part.name + ".validator").unlink(missing_ok=True)
    os.replace(part, dest)
    _remember(dest, digests)
    log.info("fetched %s -> %s (sha256 %s%s)", label, dest, digests["sha256"],
             "" if expected else ", no published checksum: recorded, not verified")
    return dest


def resolve_source(url: str, mirror: str | None) -> str:
    """Where ``url`` is actually read from once ``mirror`` (local directory or base URL) applies."""
    if not mirror:
        return url
    name = basename(url)
    local = local_path(mirror)
    if local is not None:
        if not local.is_dir():
            raise DataError(f"mirror {mirror!r} is not a directory (needed to find {name} for {url})")
        return str(local / name)
    return mirror.rstrip("/") + "/" + name


def basename(url: str) -> str:
    """Last path component of a URL or path, without query string: a safe file name in the download cache.

    Decoded separators (``..%2F..%2Fx``) do not make it a path; a URL whose last component is empty, ``.`` or
    ``..`` gets ``download-<sha256 of the URL, 16 hex digits>``."""
    name = unquote(urlparse(url).path.rstrip("/").rsplit("/", 1)[-1])
    name = name.replace("\\", "/").rsplit("/", 1)[-1].replace("\0", "")
    if name in ("", ".", ".."):
        return "download-" + hashlib.sha256(url.encode()).hexdigest()[:16]
    return name


def local_path(source: str) -> Path | None:
    """The local file a ``file://`` URL or plain path names; ``None`` for a network URL."""
    parsed = urlparse(source)
    if parsed.scheme == "file":
        return Path(urllib.request.url2pathname(parsed.path))
    if not parsed.scheme:
        return Path(source)
    return None


def file_digests(path: str | Path, *, remember: bool = False, fresh: bool = False) -> dict[str, str]:
    """sha256 and md5 of a file in one pass; with ``remember``, cached in ``path.digests.json``; ``fresh``: hash
    the file even where ``path.digests.json`` holds its digests for its size and mtime."""
    path = Path(path)
    cached = None if fresh else _recalled(path)
    if cached is not None:
        return cached
    hashes = {"sha256": hashlib.sha256(), "md5": hashlib.md5(usedforsecurity=False)}
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            for h in hashes.values():
                h.update(chunk)
    digests = {name: h.hexdigest() for name, h in hashes.items()}
    if remember:
        _remember(path, digests)
    return digests


def check_digests(path: Path, expected: dict[str, str], label: str) -> dict[str, str]:
    """Digests of ``path``; raise :class:`DataError` naming ``label`` if one differs from ``expected``."""
    digests = file_digests(path)
    for algo, want in expected.items():
        if digests[algo] != want.lower():
            raise DataError(f"checksum mismatch for {label}: expected {algo} {want.lower()}, got {digests[algo]}")
    return digests


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".digests.json")


def _recalled(path: Path) -> dict[str, str] | None:
    try:
        info = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return None
    if info.get("size") != st.st_size or info.get("mtime_ns") != st.st_mtime_ns:
        return None
    return {a: info[a] for a in ALGOS if a in info} if all(a in info for a in ALGOS) else None


def _remember(path: Path, digests: dict[str, str]) -> None:
    st = path.stat()
    with contextlib.suppress(OSError):
        _sidecar(path).write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, **digests}) + "\n",
                                  encoding="utf-8")


def _reusable(dest: Path, expected: dict[str, str], label: str) -> bool:
    """True if the cached ``dest`` can be used: hashed afresh, it matches ``expected`` or, without published
    checksums, the digests recorded when it was fetched. A cached file that fails is removed."""
    recorded = _recorded(dest)
    digests = file_digests(dest, fresh=True)
    want = expected or {a: v for a, v in (recorded or {}).items() if a in ALGOS}
    bad = [a for a, v in want.items() if digests[a] != v]
    if not bad:
        _remember(dest, digests)
        log.info("using cached %s for %s%s", dest, label, "" if want else " (no checksum known, not verified)")
        return True
    what = f"the {bad[0]} of {label}" if expected else f"the {bad[0]} recorded when it was fetched"
    log.warning("cached %s does not match %s (%s, got %s): fetching it again", dest, what, want[bad[0]],
                digests[bad[0]])
    dest.unlink()
    _sidecar(dest).unlink(missing_ok=True)
    return False


def _recorded(path: Path) -> dict[str, str] | None:
    """The digests ``path.digests.json`` recorded, whatever the file's size and mtime now."""
    try:
        info = json.loads(_sidecar(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _verify(part: Path, expected: dict[str, str], label: str) -> dict[str, str]:
    try:
        return check_digests(part, expected, label)
    except DataError as exc:
        part.unlink(missing_ok=True)
        part.with_name(part.name + ".validator").unlink(missing_ok=True)
        raise DataError(f"{exc}. The download was deleted; if the file changed upstream, check it and set "
                        "sha256: in params.yaml to the new value") from None


def _copy(src: Path, part: Path) -> None:
    if not src.is_file():
        raise DataError(f"{src} does not exist (or is not a file)")
    log.info("copying %s", src)
    shutil.copyfile(src, part)


def _download(url: str, part: Path, *, retries: int, timeout: float, progress: bool) -> None:
    """Fill ``part`` with the body of ``url``, resuming and retrying; raise DataError when giving up."""
    if urlparse(url).scheme not in ("http", "https", "ftp"):
        raise DataError(f"cannot download {url!r}: only http(s), ftp, file:// URLs and local paths are supported")
    reached, last = False, "no attempt made"
    for attempt in range(1, max(retries, 1) + 1):
        try:
            _attempt(url, part, timeout=timeout, progress=progress)
            return
        except _NoConnection as exc:
            last = str(exc)
        except _Broken as exc:
            reached, last = True, str(exc)
        if attempt < retries:
            delay = BACKOFF_S * 2 ** (attempt - 1)
            log.warning("download of %s failed (%s); attempt %d/%d in %.1fs", url, last, attempt + 1, retries, delay)
            time.sleep(delay)
    if not reached:
        host = urlparse(url).hostname or url
        raise DataError(
            f"could not reach host {host} to download {url} ({last}; tried {retries} times). If this machine is "
            f"offline, download {basename(url)} elsewhere and point params.yaml at it: set `path:` on the source to "
            "the downloaded file (or its directory), or `mirror:` to a local directory or base URL that holds "
            "files of the same names")
    raise DataError(f"download of {url} failed after {retries} attempts ({last}); the partial file {part} is kept: "
                    "run the stage again to resume")


def _open(url: str, offset: int, timeout: float, validator: str | None = None) -> http.client.HTTPResponse:
    headers = {"User-Agent": USER_AGENT}
    if offset:
        headers["Range"] = f"bytes={offset}-"
        if validator:  # the server sends the whole (new) file instead if it changed since the partial download
            headers["If-Range"] = validator
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 or exc.code == 429 or exc.code >= 500:
            raise _Broken(f"HTTP {exc.code} {exc.reason}") from None
        raise DataError(f"HTTP {exc.code} {exc.reason} for {url}: the file may have moved; set `url:`, `mirror:` "
                        "or `path:` on the source in params.yaml") from None
    except urllib.error.URLError as exc:
        raise _NoConnection(str(exc.reason)) from None
    except (http.client.HTTPException, OSError) as exc:  # connected, then the answer failed
        raise _Broken(f"{type(exc).__name__}: {exc}") from None


def _attempt(url: str, part: Path, *, timeout: float, progress: bool) -> None:
    """One GET of ``url`` into ``part``, resuming from its current size when the server allows it."""
    offset = part.stat().st_size if part.exists() else 0
    meta = part.with_name(part.name + ".validator")
    validator = meta.read_text(encoding="utf-8").strip() if offset and meta.exists() else None
    try:
        resp = _open(url, offset, timeout, validator)
    except _Broken:
        if offset:  # e.g. 416: the partial file is not a prefix the server can continue; start over
            part.unlink(missing_ok=True)
        raise
    with resp:
        _refuse_html(resp, url)
        resumed = offset > 0 and resp.status == 206
        if offset and not resumed:
            log.info("server sent the whole file for %s (Range ignored or file changed); restarting", url)
        if not resumed:
            _save_validator(meta, resp)
        start = offset if resumed else 0
        length = resp.headers.get("Content-Length")
        length = int(length) if length and length.isdigit() else None
        total = start + length if length is not None else None
        received = _stream(resp, part, "ab" if resumed else "wb", start, total, progress)
    if length is not None and received < length:
        raise _Broken(f"connection closed after {start + received} of {total} bytes")


def _save_validator(meta: Path, resp: http.client.HTTPResponse) -> None:
    """Remember the ETag (or Last-Modified) of a fresh transfer, for ``If-Range`` when resuming it."""
    validator = resp.headers.get("ETag") or resp.headers.get("Last-Modified")
    if validator and not validator.startswith("W/"):
        meta.write_text(validator + "\n", encoding="utf-8")
    else:
        meta.unlink(missing_ok=True)


def _stream(resp: http.client.HTTPResponse, part: Path, mode: str, start: int, total: int | None,
            progress: bool) -> int:
    """Copy the response body to ``part``; return the bytes received (raise _Broken on a read error)."""
    received = 0
    with open(part, mode) as out, tqdm(total=total, initial=start, unit="B", unit_scale=True, unit_divisor=1024,
                                       desc=part.name.removesuffix(".part"), leave=False,
                                       disable=None if progress else True) as bar:
        while True:
            try:
                chunk = resp.read(CHUNK)
            except (http.client.HTTPException, OSError) as exc:
                raise _Broken(f"{type(exc).__name__} after {start + received} bytes: {exc}") from None
            if not chunk:
                return received
            out.write(chunk)
            received += len(chunk)
            bar.update(len(chunk))


def _refuse_html(resp: http.client.HTTPResponse, url: str) -> None:
    """A dead link often answers 200 with an HTML page; never store that as the archive."""
    ctype = resp.headers.get("Content-Type", "")
    if ctype.startswith("text/html") and not urlparse(url).path.endswith((".html", ".htm")):
        raise DataError(f"{url} returned an HTML page (Content-Type {ctype}) instead of the file: the link is "
                        "probably dead or behind a login page; download the file by hand and set `path:` on the "
                        "source in params.yaml")
