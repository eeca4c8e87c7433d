"""The download stage, offline: a real HTTP server on 127.0.0.1 serves fixture archives built per test.

Covers :func:`lsnmt.data.fetch.fetch` (resume after a dropped connection, servers
that ignore Range, checksum mismatch, cache reuse, mirrors, unreachable hosts) and
:func:`lsnmt.data.download.download` (raw layout, MANIFEST, atomicity, coverage
checks) with an OPUS-100-shaped tarball, an IWSLT-17-shaped zip and the
repository's embedded data.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import re
import socket
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lsnmt.data import fetch as fetch_mod
from lsnmt.data.config import DataConfig, DownloadConfig, DownloadView, SourceConfig
from lsnmt.data.download import download as download_sections
from lsnmt.data.fetch import fetch
from lsnmt.data.sources import materialize
from lsnmt.io import DataError, count_lines

OPUS_URL_PATH = "/OPUS-100/v1.0/opus-100-corpus-v1.0.tar.gz"
NEL = "\u0085"  # str.splitlines() would break here; the raw files must not


# -- a small HTTP server ---------------------------------------------------------------------------------------


@dataclass
class Served:
    files: dict[str, bytes] = field(default_factory=dict)
    etag: str | None = None
    drop_once: set[str] = field(default_factory=set)
    ignore_range: set[str] = field(default_factory=set)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    content_type: str = "application/octet-stream"
    port: int = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep pytest output quiet
        pass

    def do_GET(self) -> None:  # http.server API
        state: Served = self.server.state  # type: ignore[attr-defined]
        rng = self.headers.get("Range")
        state.requests.append((self.path, rng))
        body = state.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        start = 0
        stale = self.headers.get("If-Range") not in (None, state.etag)
        if rng and self.path not in state.ignore_range and not stale:
            start = int(re.fullmatch(r"bytes=(\d+)-", rng).group(1))  # type: ignore[union-attr]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        payload = body[start:]
        self.send_header("Content-Type", state.content_type)
        if state.etag:
            self.send_header("ETag", state.etag)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.path in state.drop_once:  # promise everything, send half, hang up
            state.drop_once.discard(self.path)
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(payload)


@pytest.fixture
def server() -> Iterator[Served]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    state = Served(port=httpd.server_address[1])
    httpd.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch_mod, "BACKOFF_S", 0.001)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- fixture archives ---------------------------------------------------------------------------------------------


def opus_lines(x: str, split: str, lang: str) -> list[str]:
    n = {"train": 5, "dev": 3, "test": 4}[split]
    lines = [f"{split} {x}-en pair {i} in {lang}" for i in range(n)]
    if split == "train":
        lines[1] = f"line with a NEL{NEL}inside ({lang})"
    return lines


def add_text(tf: tarfile.TarFile, name: str, lines: list[str] | bytes) -> None:
    data = lines if isinstance(lines, bytes) else "".join(line + "\n" for line in lines).encode()
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def write_tgz(path: Path, files: dict[str, list[str] | bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, lines in files.items():
            add_text(tf, name, lines)
    return path


def opus_tarball() -> bytes:
    """OPUS-100 v1.0 layout with supervised de-en and en-fr, and the zero-shot de-fr test set."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        add_text(tf, "opus-100-corpus/README", ["OPUS-100 fixture"])
        for x in ("de", "fr"):
            d = "-".join(sorted((x, "en")))
            for split in ("train", "dev", "test"):
                for lang in (x, "en"):
                    add_text(tf, f"opus-100-corpus/v1.0/supervised/{d}/opus.{d}-{split}.{lang}",
                             opus_lines(x, split, lang))
        for lang in ("de", "fr"):
            add_text(tf, f"opus-100-corpus/v1.0/zero-shot/de-fr/opus.de-fr-test.{lang}",
                     [f"zs {lang} 1", f"zs {lang} 2"])
    return buf.getvalue()


def experiment(tmp_path: Path, *sources: SourceConfig, languages: tuple[str, ...] = ("en", "de", "fr"),
               **data: object) -> DownloadView:
    return DownloadView(data=DataConfig(languages=languages, sources=sources, **data),  # type: ignore[arg-type]
                        download=DownloadConfig(retries=2, timeout=5.0, cache_dir=str(tmp_path / "cache")))


def download(view: DownloadView, raw: Path) -> None:
    """The stage's call (stages/download.py): the view's sections handed down."""
    download_sections(view.data, view.download, raw)


def opus_source(**kw: object) -> SourceConfig:
    return SourceConfig(name="opus100", kind="opus100", splits=("train", "valid", "test"), **kw)  # type: ignore[arg-type]


def read(path: Path) -> list[str]:
    return path.read_bytes().decode().split("\n")[:-1]


def manifest(raw: Path) -> dict[str, dict[str, str]]:
    with open(raw / "MANIFEST.tsv", encoding="utf-8", newline="") as fh:
        return {row["path"]: row for row in csv.DictReader(fh, delimiter="\t")}


# -- fetch ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ignore_range", [False, True], ids=["resume", "server-ignores-range"])
def test_fetch_survives_a_dropped_connection(server: Served, tmp_path: Path, ignore_range: bool) -> None:
    body = bytes(range(256)) * 1200
    server.files["/a.bin"], server.etag = body, '"e1"'  # resumed with If-Range: "e1"
    server.drop_once.add("/a.bin")
    if ignore_range:
        server.ignore_range.add("/a.bin")
    dest = fetch(server.url("/a.bin"), tmp_path / "a.bin", sha256=sha256(body), retries=3, progress=False)
    assert dest.read_bytes() == body
    assert not (tmp_path / "a.bin.part").exists()
    assert [r for _, r in server.requests] == [None, f"bytes={len(body) // 2}-"]


def test_fetch_restarts_a_partial_file_that_changed_upstream(server: Served, tmp_path: Path) -> None:
    body = b"new version\n" * 500
    server.files["/v.bin"], server.etag = body, '"v2"'
    (tmp_path / "v.bin.part").write_bytes(b"old version\n" * 100)
    (tmp_path / "v.bin.part.validator").write_text('"v1"\n')
    assert fetch(server.url("/v.bin"), tmp_path / "v.bin", progress=False).read_bytes() == body
    assert server.requests == [("/v.bin", "bytes=1200-")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.bin", "v.bin.digests.json"]


def test_fetch_checksum_mismatch_deletes_the_download(server: Served, tmp_path: Path) -> None:
    good, bad = b"good archive\n" * 100, b"bad archive!\n" * 100
    server.files["/x.tgz"] = bad
    url = server.url("/x.tgz")
    with pytest.raises(DataError) as err:
        fetch(url, tmp_path / "x.tgz", sha256=sha256(good), progress=False)
    msg = str(err.value)
    assert url in msg and sha256(good) in msg and sha256(bad) in msg and "checksum mismatch" in msg
    assert not (tmp_path / "x.tgz").exists() and not (tmp_path / "x.tgz.part").exists()


def test_fetch_reuses_a_verified_cache_without_network(server: Served, tmp_path: Path) -> None:
    body = b"cached\n" * 10
    server.files["/c.gz"] = body
    fetch(server.url("/c.gz"), tmp_path / "c.gz", md5=hashlib.md5(body).hexdigest(), progress=False)
    offline = f"http://127.0.0.1:{closed_port()}/c.gz"
    assert fetch(offline, tmp_path / "c.gz", sha256=sha256(body), retries=1).read_bytes() == body
    assert len(server.requests) == 1


@pytest.mark.parametrize("published", [True, False], ids=["published-sha256", "no-checksum"])
def test_fetch_hashes_a_cached_file_again_and_refetches_rotten_bytes(server: Served, tmp_path: Path,
                                                                     published: bool) -> None:
    """A bit rotted in the cache, size and mtime unchanged: the old code reused it without hashing it again."""
    body = bytes(range(256)) * 40
    server.files["/r.tar"] = body
    sha = sha256(body) if published else None
    dest = fetch(server.url("/r.tar"), tmp_path / "r.tar", sha256=sha, progress=False)
    st, raw = dest.stat(), bytearray(dest.read_bytes())
    raw[1000] ^= 1
    dest.write_bytes(bytes(raw))
    os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert fetch(server.url("/r.tar"), tmp_path / "r.tar", sha256=sha, progress=False).read_bytes() == body
    assert len(server.requests) == 2


def test_fetch_unreachable_host_says_how_to_work_offline(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/corpus.tgz"
    with pytest.raises(DataError, match=r"could not reach host 127\.0\.0\.1") as err:
        fetch(url, tmp_path / "corpus.tgz", retries=2, progress=False)
    assert "mirror:" in str(err.value) and "path:" in str(err.value) and "corpus.tgz" in str(err.value)


def test_fetch_mirror_local_directory_and_base_url(server: Served, tmp_path: Path) -> None:
    body = b"mirrored\n"
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "m.tgz").write_bytes(body)
    far = f"http://127.0.0.1:{closed_port()}/far/away/m.tgz"
    local = fetch(far, tmp_path / "1" / "m.tgz", mirror=str(tmp_path / "mirror"), sha256=sha256(body))
    assert local.read_bytes() == body
    server.files["/mirror/m.tgz"] = body
    out = fetch(far, tmp_path / "2" / "m.tgz", mirror=server.url("/mirror/"), sha256=sha256(body), progress=False)
    assert out.read_bytes() == body and server.requests == [("/mirror/m.tgz", None)]


def test_fetch_file_url_and_plain_path(tmp_path: Path) -> None:
    src = tmp_path / "src.txt"
    src.write_bytes(b"local\n")
    assert fetch(src.as_uri(), tmp_path / "a" / "src.txt").read_bytes() == b"local\n"
    assert fetch(str(src), tmp_path / "b" / "src.txt", sha256=sha256(b"local\n")).read_bytes() == b"local\n"


def test_fetch_refuses_an_html_page(server: Served, tmp_path: Path) -> None:
    server.files["/dead.tar.gz"] = b"<html><title>moved</title></html>"
    server.content_type = "text/html; charset=utf-8"
    with pytest.raises(DataError, match="HTML page"):
        fetch(server.url("/dead.tar.gz"), tmp_path / "dead.tar.gz", progress=False)
    assert not (tmp_path / "dead.tar.gz").exists()


# -- download: OPUS-100 over HTTP ------------------------------------------------------------------------------------


def test_download_opus100_raw_layout_and_manifest(server: Served, tmp_path: Path) -> None:
    tarball = opus_tarball()
    server.files[OPUS_URL_PATH] = tarball
    server.drop_once.add(OPUS_URL_PATH)  # the stage resumes too
    src = opus_source(url=server.url(OPUS_URL_PATH), sha256=sha256(tarball))
    raw = tmp_path / "data" / "raw"
    download(experiment(tmp_path, src), raw)
    for x in ("de", "fr"):
        for split, release in (("train", "train"), ("valid", "dev"), ("test", "test")):
            for lang in ("en", x):
                assert read(raw / split / "opus100" / f"en-{x}.{lang}") == opus_lines(x, release, lang)
    assert read(raw / "train" / "opus100" / "en-de.de")[1] == f"line with a NEL{NEL}inside (de)"
    rows = manifest(raw)
    row = rows["train/opus100/en-de.de"]
    assert row["lines"] == "5" and row["corpus"] == "opus100" and row["source"] == src.url
    assert row["source_sha256"] == sha256(tarball) and row["source_check"] == "sha256"
    assert row["sha256"] == sha256((raw / "train/opus100/en-de.de").read_bytes())
    assert len(rows) == 12 and not (raw / "test" / "opus100" / "de-fr.de").exists()
    assert (tmp_path / "cache" / "opus100" / "opus-100-corpus-v1.0.tar.gz").read_bytes() == tarball


def test_download_max_pairs_and_zero_shot_pairs(tmp_path: Path) -> None:
    (tmp_path / "opus-100-corpus-v1.0.tar.gz").write_bytes(opus_tarball())
    data = DataConfig(languages=("en", "de", "fr"), eval_directions="all",
                      sources=(opus_source(path=str(tmp_path / "opus-100-corpus-v1.0.tar.gz"), max_pairs=2),))
    raw = tmp_path / "raw"
    written = materialize(data.sources[0], data, raw, tmp_path / "cache", DownloadConfig())
    assert read(raw / "train" / "opus100" / "en-de.en") == opus_lines("de", "train", "en")[:2]
    assert read(raw / "test" / "opus100" / "de-fr.fr") == ["zs fr 1", "zs fr 2"]
    assert raw / "test" / "opus100" / "de-fr.de" in written
    assert not (raw / "valid" / "opus100" / "de-fr.de").exists()  # OPUS-100 has no zero-shot dev set


def test_download_checksum_mismatch_leaves_raw_untouched(server: Served, tmp_path: Path) -> None:
    good = opus_tarball()
    corrupt = bytearray(good)
    corrupt[len(corrupt) // 2] ^= 0xFF
    server.files["/bad" + OPUS_URL_PATH] = bytes(corrupt)
    raw = tmp_path / "raw"
    (raw / "train").mkdir(parents=True)
    (raw / "train" / "previous.txt").write_text("previous run\n")
    url = server.url("/bad" + OPUS_URL_PATH)
    with pytest.raises(DataError) as err:
        download(experiment(tmp_path, opus_source(url=url, sha256=sha256(good))), raw)
    assert url in str(err.value) and sha256(good) in str(err.value) and sha256(bytes(corrupt)) in str(err.value)
    assert sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*")) == ["train", "train/previous.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "raw"]  # no half-built .raw.*.tmp left
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*"))


@pytest.mark.parametrize("kind", ["directory", "base-url"])
def test_download_mirror_replaces_the_catalogue_host(server: Served, tmp_path: Path, kind: str) -> None:
    tarball = opus_tarball()
    if kind == "directory":
        (tmp_path / "mirror").mkdir()
        (tmp_path / "mirror" / "opus-100-corpus-v1.0.tar.gz").write_bytes(tarball)
        mirror = str(tmp_path / "mirror")
    else:
        server.files["/opus/opus-100-corpus-v1.0.tar.gz"] = tarball
        mirror = server.url("/opus")
    download(experiment(tmp_path, opus_source(mirror=mirror)), tmp_path / "raw")  # catalogue URL, never contacted
    assert read(tmp_path / "raw" / "valid" / "opus100" / "en-fr.fr") == opus_lines("fr", "dev", "fr")
    row = manifest(tmp_path / "raw")["valid/opus100/en-fr.fr"]
    assert row["source"].endswith("opus-100-corpus-v1.0.tar.gz") and row["source_check"] == "none"
    assert row["source_sha256"] == sha256(tarball)
    assert server.requests == ([] if kind == "directory" else [("/opus/opus-100-corpus-v1.0.tar.gz", None)])


def test_download_offline_error_and_nothing_written(tmp_path: Path) -> None:
    src = opus_source(url=f"http://127.0.0.1:{closed_port()}/opus-100-corpus-v1.0.tar.gz")
    with pytest.raises(DataError, match="could not reach host") as err:
        download(experiment(tmp_path, src), tmp_path / "raw")
    assert "path:" in str(err.value) and "mirror:" in str(err.value)
    assert not (tmp_path / "raw").exists()


def test_download_names_a_direction_without_data(tmp_path: Path) -> None:
    (tmp_path / "opus.tgz").write_bytes(opus_tarball())
    src = opus_source(path=str(tmp_path / "opus.tgz"))
    with pytest.raises(DataError, match=r"direction en-it in split train"):
        download(experiment(tmp_path, src, languages=("en", "de", "it")), tmp_path / "raw")
    with pytest.raises(DataError, match="no multiway split"):
        materialize(SourceConfig(name="o", kind="opus100", splits=("multiway",)),
                    DataConfig(languages=("en", "de"), sources=(src,)), tmp_path, tmp_path, DownloadConfig())
    with pytest.raises(DataError, match="unknown kind 'nope'"):
        materialize(SourceConfig(name="o", kind="nope"), DataConfig(languages=("en", "de"), sources=(src,)),
                    tmp_path, tmp_path, DownloadConfig())


# -- download: IWSLT-17 zip from a local path --------------------------------------------------------------------------


def iwslt17_zip(path: Path) -> None:
    def xml(lang: str, n: int) -> str:
        segs = "".join(f'<seg id="{i}"> {lang}  seg {i} </seg>\n' for i in range(1, n + 1))
        return f'<mteval>\n<srcset setid="x" srclang="{lang}">\n<doc docid="1">\n{segs}</doc>\n</srcset>\n</mteval>\n'

    tags = "<url>http://ted</url>\n<talkid>1</talkid>\n<title>Title {l}</title>\nHello {l}\nWorld {l}\n"
    with zipfile.ZipFile(path, "w") as zf:
        for lang in ("en", "it"):
            zf.writestr(f"DeEnItNlRo-DeEnItNlRo/train.tags.en-it.{lang}", tags.format(l=lang))
            zf.writestr(f"DeEnItNlRo-DeEnItNlRo/IWSLT17.TED.dev2010.en-it.{lang}.xml", xml(lang, 2))
            zf.writestr(f"DeEnItNlRo-DeEnItNlRo/IWSLT17.TED.tst2010.en-it.{lang}.xml", xml(lang, 3))


def test_download_iwslt17_from_a_local_zip(tmp_path: Path) -> None:
    iwslt17_zip(tmp_path / "DeEnItNlRo-DeEnItNlRo.zip")
    src = SourceConfig(name="iwslt17", kind="iwslt17", splits=("train", "valid", "test"),
                       path=str(tmp_path / "DeEnItNlRo-DeEnItNlRo.zip"))
    raw = tmp_path / "raw"
    download(experiment(tmp_path, src, languages=("en", "it")), raw)
    assert read(raw / "train" / "iwslt17" / "en-it.it") == ["Hello it", "World it"]
    assert read(raw / "valid" / "iwslt17" / "en-it.en") == ["en seg 1", "en seg 2"]
    assert count_lines(raw / "test" / "iwslt17" / "en-it.it") == 3


# -- download: the repository's embedded data ------------------------------------------------------------------------

TATOEBA_LINES = {"de": 17565, "fr": 12681, "ru": 19425, "tr": 13907, "he": 10519, "hi": 5000, "vi": 2500, "sw": 387}


def test_download_embedded_default_data(tmp_path: Path) -> None:
    sources = (SourceConfig(name="tatoeba", kind="embedded", path="embedded", splits=("train",)),
               SourceConfig(name="flores200", kind="embedded", path="embedded", splits=("valid", "test")),
               SourceConfig(name="ntrex128", kind="embedded", path="embedded", splits=("multiway",)))
    raw = tmp_path / "raw"
    download(experiment(tmp_path, *sources, languages=("en", *TATOEBA_LINES)), raw)
    for x, n in TATOEBA_LINES.items():
        assert count_lines(raw / "train" / "tatoeba" / f"en-{x}.en") == n
        assert count_lines(raw / "train" / "tatoeba" / f"en-{x}.{x}") == n
    for lang in ("en", *TATOEBA_LINES):
        assert count_lines(raw / "valid" / "flores200" / f"mw.{lang}") == 997
        assert count_lines(raw / "test" / "flores200" / f"mw.{lang}") == 1012
        assert count_lines(raw / "multiway" / "ntrex128" / f"mw.{lang}") == 1997
    root = Path(__file__).resolve().parents[2]
    assert (raw / "train/tatoeba/en-sw.sw").read_bytes() == (root / "embedded/tatoeba/eng-swa/test.swa").read_bytes()
    rows = manifest(raw)
    assert len(rows) == 16 + 18 + 9
    assert rows["test/flores200/mw.he"]["source"] == "embedded/flores200/devtest/heb_Hebr.devtest"
    assert {r["source_check"] for r in rows.values()} == {"sha256"}  # checked against embedded/MANIFEST.tsv


# -- the other kinds, from local copies in their release layouts ---------------------------------------------------


def test_flores200_path_is_checked_against_the_pinned_checksum(tmp_path: Path) -> None:
    files = {f"flores200_dataset/{s}/{c}.{s}": [f"{c} {s} {i}" for i in range(3)]
             for s in ("dev", "devtest") for c in ("eng_Latn", "deu_Latn")}
    tgz = write_tgz(tmp_path / "flores200_dataset.tar.gz", files)
    src = SourceConfig(name="flores200", kind="flores200", splits=("valid", "test", "multiway"), path=str(tgz))
    with pytest.raises(DataError, match="b8b0b76783024b85797e5cc75064eb83fc5288b41e9654dabc7be6ae944011f6"):
        download(experiment(tmp_path, src, languages=("en", "de"), train_directions="none"), tmp_path / "raw")
    pinned = SourceConfig(name="flores200", kind="flores200", splits=("valid", "test", "multiway"), path=str(tgz),
                          sha256=sha256(tgz.read_bytes()))
    download(experiment(tmp_path, pinned, languages=("en", "de"), train_directions="none"), tmp_path / "raw")
    assert read(tmp_path / "raw" / "valid" / "flores200" / "mw.de") == files["flores200_dataset/dev/deu_Latn.dev"]
    assert read(tmp_path / "raw" / "multiway" / "flores200" / "mw.en")[2] == "eng_Latn devtest 2"


def test_iwslt14_from_the_outer_release_archive(tmp_path: Path) -> None:
    head = ["<url>http://ted</url>", "<speaker>S</speaker>", "<talkid>7</talkid>"]
    inner = {f"de-en/train.tags.de-en.{lang}": [*head, f"<title>T {lang}</title>"] + [f"{lang} {i}" for i in range(46)]
             for lang in ("de", "en")}
    inner |= {f"de-en/IWSLT14.TED.{t}.de-en.{lang}.xml": [f'<seg id="1"> {t} {lang} </seg>']
              for t in ("dev2010", "tst2010", "tst2012") for lang in ("de", "en")}
    pair = write_tgz(tmp_path / "de-en.tgz", inner)
    outer = write_tgz(tmp_path / "2014-01.tgz", {"2014-01/texts/de/en/de-en.tgz": pair.read_bytes()})
    src = SourceConfig(name="iwslt14", kind="iwslt14", splits=("train", "valid", "test"), path=str(outer))
    raw = tmp_path / "raw"
    download(experiment(tmp_path, src, languages=("en", "de")), raw)
    train, valid = read(raw / "train/iwslt14/en-de.de"), read(raw / "valid/iwslt14/en-de.de")
    assert train[0] == "t de" and valid == ["de 21", "de 44"] and len(train) == 47 - 2  # lowercased as Xu et al.
    assert read(raw / "test/iwslt14/en-de.en") == ["dev2010 en", "tst2010 en", "tst2012 en"]


def test_wmt14_ted_and_mc4_from_directories(tmp_path: Path) -> None:
    wmt = tmp_path / "wmt"
    wmt.mkdir()
    write_tgz(wmt / "training-parallel-commoncrawl.tgz", {f"commoncrawl.de-en.{x}": [f"cc {x}"] for x in ("de", "en")})
    write_tgz(wmt / "training-parallel-nc-v9.tgz", {f"training/news-commentary-v9.de-en.{x}": [f"nc {x}"]
                                                    for x in ("de", "en")})
    write_tgz(wmt / "training-parallel-europarl-v7.tgz", {f"training/europarl-v7.de-en.{x}": [f"ep {x}"]
                                                          for x in ("de", "en")})
    for name, lines in {"newstest2013.de": ["v de"], "newstest2013.en": ["v en"]}.items():
        (wmt / "dev").mkdir(exist_ok=True)
        (wmt / "dev" / name).write_text(lines[0] + "\n")
    for side in ("src.en", "ref.de"):
        (wmt / f"newstest2014-deen-{side}.sgm").write_text(f'<doc>\n<seg id="1">  t   {side} </seg>\n</doc>\n')
    ted = write_tgz(tmp_path / "ted_talks.tar.gz", {"all_talks_test.tsv": [
        "talk_name\ten\tde\tzh-cn", "a\thi\thallo\t你好", "b\tno\t__NULL__\t不", "c\tyes\tja\t是"]})
    mc4 = tmp_path / "mc4"
    mc4.mkdir()
    for i in range(2):
        with gzip.open(mc4 / f"c4-de.tfrecord-{i:05d}-of-02048.json.gz", "wt") as fh:
            fh.writelines(json.dumps({"text": f"doc {i}.{j}\nzeile\r\nende"}) + "\n" for j in range(3))
    sources = (SourceConfig(name="wmt", kind="wmt14", splits=("train", "valid", "test"), path=str(wmt)),
               SourceConfig(name="ted", kind="ted_multiway", splits=("multiway",), path=str(ted)),
               SourceConfig(name="mc4", kind="mc4", splits=("train",), languages=("de",), path=str(mc4), max_pairs=4))
    raw = tmp_path / "raw"
    download(experiment(tmp_path, *sources, languages=("en", "de")), raw)
    assert read(raw / "train/wmt/en-de.de") == ["ep de", "cc de", "nc de"]
    assert read(raw / "test/wmt/en-de.en") == ["t src.en"] and read(raw / "valid/wmt/en-de.de") == ["v de"]
    assert read(raw / "multiway/ted/mw.de") == ["hallo", "ja"] and read(raw / "multiway/ted/mw.en") == ["hi", "yes"]
    assert read(raw / "train/mc4/mw.de") == [f"doc {d} zeile ende" for d in ("0.0", "0.1", "0.2", "1.0")]


def test_download_local_corpus_in_raw_layout(tmp_path: Path) -> None:
    corpus = tmp_path / "mine"
    for split in ("train", "valid", "test"):
        for lang in ("de", "fr"):
            (corpus / split).mkdir(parents=True, exist_ok=True)
            (corpus / split / f"en-{lang}.en").write_text(f"hello {split}\nworld\n")
            (corpus / split / f"en-{lang}.{lang}").write_text(f"{lang} {split}\n{lang} world\n")
    src = SourceConfig(name="mine", kind="local", path=str(corpus), splits=("train", "valid", "test"))
    exp = experiment(tmp_path, src)
    download(exp, tmp_path / "raw")
    assert read(tmp_path / "raw" / "test" / "mine" / "en-fr.fr") == ["fr test", "fr world"]
    assert manifest(tmp_path / "raw")["train/mine/en-de.de"]["lines"] == "2"
    with pytest.raises(DataError, match="is not a directory"):
        download(experiment(tmp_path, SourceConfig(name="x", kind="local", path=str(tmp_path / "nope"))),
                 tmp_path / "raw2")


# -- nothing escapes: cache names, archive members, symbolic links ------------------------------------------------


def test_cache_name_from_a_url_that_encodes_dot_dot(server: Served, tmp_path: Path) -> None:
    tarball = opus_tarball()
    server.files["/x/..%2F..%2F..%2Fopus.tgz"] = tarball
    src = opus_source(url=server.url("/x/..%2F..%2F..%2Fopus.tgz"), sha256=sha256(tarball))
    download(experiment(tmp_path, src), tmp_path / "raw")
    assert (tmp_path / "cache" / "opus100" / "opus.tgz").read_bytes() == tarball
    assert not (tmp_path / "opus.tgz").exists()
    assert fetch_mod.basename("http://h/a/%2E%2E").startswith("download-")
    assert fetch_mod.basename("http://h/") == fetch_mod.basename("http://h/") != fetch_mod.basename("http://g/")


def test_archive_members_never_escape(tmp_path: Path) -> None:
    from lsnmt.data.sources.archive import extract, extract_member

    archive = tmp_path / "a" / "evil.tgz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as tf:
        add_text(tf, "../../escaped/train.de", ["hallo"])
        link = tarfile.TarInfo("train.en")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/hostname"
        tf.addfile(link)
        hard = tarfile.TarInfo("dev.en")
        hard.type, hard.linkname = tarfile.LNKTYPE, "../../escaped/train.de"
        tf.addfile(hard)
    got = extract(archive, ["train.de", "train.en", "dev.en"], tmp_path / "a" / "out")
    assert got == {"train.de": tmp_path / "a" / "out" / "train.de"}
    assert read(got["train.de"]) == ["hallo"]
    assert not extract_member(archive, "train.en", tmp_path / "a" / "x")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "evil.tgz", "out", "train.de"]


def test_symlink_out_of_a_local_source_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not corpus data\n")
    corpus = tmp_path / "mine"
    (corpus / "train").mkdir(parents=True)
    (corpus / "train" / "en-de.en").write_text("hello\n")
    (corpus / "train" / "en-de.de").symlink_to(secret)
    src = SourceConfig(name="mine", kind="local", path=str(corpus), splits=("train",))
    with pytest.raises(DataError, match=r"en-de\.de: a symbolic link to .*secret\.txt, outside .*mine; refused"):
        download(experiment(tmp_path, src, languages=("en", "de"), eval_directions="none"), tmp_path / "raw")
    assert not (tmp_path / "raw").exists()
    (corpus / "train" / "en-de.de").unlink()
    (corpus / "train" / "real.de").write_text("hallo\n")
    (corpus / "train" / "en-de.de").symlink_to("real.de")  # a link inside the folder is fine
    download(experiment(tmp_path, src, languages=("en", "de"), eval_directions="none"), tmp_path / "raw")
    assert read(tmp_path / "raw" / "train" / "mine" / "en-de.de") == ["hallo"]


def test_symlink_out_of_a_path_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.tgz").write_bytes(opus_tarball())
    folder = tmp_path / "given"
    folder.mkdir()
    (folder / "opus-100-corpus-v1.0.tar.gz").symlink_to(tmp_path / "elsewhere.tgz")
    with pytest.raises(DataError, match="outside .*given; refused"):
        download(experiment(tmp_path, opus_source(path=str(folder))), tmp_path / "raw")
    assert not (tmp_path / "raw").exists()
