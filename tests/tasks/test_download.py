"""task_prep fetches WikiANN and TyDiQA-GoldP for the tasks of task_cfg (lsnmt.data.download.download_tasks):
real-format archives served on 127.0.0.1, local copies, mirrors, the offline error, and the raw layout and MANIFEST
rows they produce."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from lsnmt.data.config import DownloadConfig, TaskSource
from lsnmt.data.download import download_tasks
from lsnmt.data.sources import tydiqa, wikiann
from lsnmt.io import DataError
from lsnmt.tasks.config import EncoderConfig, TaskConfig
from tests.data.test_download import Served, closed_port, manifest, no_backoff, server  # noqa: F401 (fixtures)

FIX = Path(__file__).resolve().parents[2] / "embedded" / "tasks"
LANGS = ("en", "zh")


def panx_tar() -> bytes:
    """``panx_dataset.tar`` as Rahimi et al. ship it: an outer tar of ``{lang}.tar.gz``, each with train/dev/test."""
    outer = io.BytesIO()
    with tarfile.open(fileobj=outer, mode="w") as out:
        for lang in ("en", "fr", "zh"):
            inner = io.BytesIO()
            with tarfile.open(fileobj=inner, mode="w:gz") as tf:
                for split in ("train", "dev", "test"):
                    data = (FIX / "wikiann" / lang / split).read_bytes()
                    info = tarfile.TarInfo(split)
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))
            info = tarfile.TarInfo(f"{lang}.tar.gz")
            info.size = len(inner.getvalue())
            out.addfile(info, io.BytesIO(inner.getvalue()))
    return outer.getvalue()


def download(tasks: dict[str, TaskConfig], raw: Path, tmp: Path) -> None:
    """What ``task_prep`` runs first (stages/task_prep.py): each task's source and languages handed down."""
    dl = DownloadConfig(retries=2, timeout=5.0, cache_dir=str(tmp / "cache"))
    download_tasks({name: (t.source, t.languages) for name, t in tasks.items()}, dl, raw)


def _ner(**source: str) -> TaskConfig:
    return TaskConfig(kind="ner", languages=LANGS, source=TaskSource(kind="wikiann", **source),
                      encoder=EncoderConfig(init="random"))


def _qa(**source: str) -> TaskConfig:
    return TaskConfig(kind="qa", languages=("bn", "en"), source=TaskSource(kind="tydiqa", **source),
                      encoder=EncoderConfig(init="random"))


def test_wikiann_release_tar_from_a_url_and_tydiqa_from_a_mirror(server: Served, tmp_path: Path) -> None:  # noqa: F811
    server.files["/panx_dataset.tar"] = panx_tar()
    for r in tydiqa.REMOTES:
        server.files[f"/tydiqa/{r.name}"] = (FIX / "tydiqa" / r.name).read_bytes()
    tasks = dict(wikiann=_ner(url=server.url("/panx_dataset.tar")), tydiqa=_qa(mirror=server.url("/tydiqa")))
    download(tasks, tmp_path / "raw", tmp_path)
    raw = tmp_path / "raw" / "tasks"
    for lang in LANGS:  # only the task's languages, bytes unchanged
        for split in wikiann.FILES:
            assert (raw / "wikiann" / lang / split).read_bytes() == (FIX / "wikiann" / lang / split).read_bytes()
    assert not (raw / "wikiann" / "fr").exists()
    for r in tydiqa.REMOTES:
        assert (raw / "tydiqa" / r.name).read_bytes() == (FIX / "tydiqa" / r.name).read_bytes()
    rows = manifest(tmp_path / "raw")
    assert rows["tasks/wikiann/zh/test"]["corpus"] == "wikiann"
    assert rows["tasks/wikiann/zh/test"]["source"] == server.url("/panx_dataset.tar")
    assert rows["tasks/tydiqa/tydiqa-goldp-v1.1-dev.json"]["source"].endswith("/tydiqa/tydiqa-goldp-v1.1-dev.json")
    assert {p for p, _ in server.requests} == {"/panx_dataset.tar", *(f"/tydiqa/{r.name}" for r in tydiqa.REMOTES)}


def panx_zip() -> bytes:
    """``panx_dataset.zip`` as Hugging Face's copy holds it: the same ``{lang}.tar.gz`` files at its top level."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(panx_tar())) as tf, zipfile.ZipFile(buf, "w") as zf:
        for info in tf.getmembers():
            zf.writestr(info.name, tf.extractfile(info).read())  # type: ignore[union-attr]
    return buf.getvalue()


def test_wikiann_from_the_hugging_face_zip(server: Served, tmp_path: Path) -> None:  # noqa: F811
    """The catalogue's default (Dropbox is dead): the zip, fetched from its real path on a mirror host."""
    server.files["/datasets.huggingface.co/wikiann/1.1.0/panx_dataset.zip"] = panx_zip()
    mirror = server.url("/datasets.huggingface.co/wikiann/1.1.0")
    download(dict(wikiann=_ner(mirror=mirror)), tmp_path / "raw", tmp_path)
    for split in wikiann.FILES:
        assert (tmp_path / "raw/tasks/wikiann/zh" / split).read_bytes() == (FIX / "wikiann/zh" / split).read_bytes()
    assert [p for p, _ in server.requests] == ["/datasets.huggingface.co/wikiann/1.1.0/panx_dataset.zip"]


def test_local_copies_tar_or_extracted_folders(tmp_path: Path) -> None:
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "panx_dataset.tar").write_bytes(panx_tar())
    for path in (str(tmp_path / "dl"), str(tmp_path / "dl" / "panx_dataset.tar"), str(FIX / "wikiann")):
        download(dict(wikiann=_ner(path=path)), tmp_path / "raw", tmp_path)
        assert (tmp_path / "raw/tasks/wikiann/zh/dev").read_bytes() == (FIX / "wikiann/zh/dev").read_bytes()


def test_missing_language_and_offline_errors(tmp_path: Path) -> None:
    task = TaskConfig(kind="ner", languages=("en", "qu"), source=TaskSource(kind="wikiann", path=str(FIX / "wikiann")),
                      encoder=EncoderConfig(init="random"))
    with pytest.raises(DataError, match=r"no split file qu/train, qu/dev, qu/test"):
        download(dict(wikiann=task), tmp_path / "raw", tmp_path)
    url = f"http://127.0.0.1:{closed_port()}/panx_dataset.tar"
    with pytest.raises(DataError, match="could not reach host") as err:
        download(dict(wikiann=_ner(url=url)), tmp_path / "raw", tmp_path)
    assert "panx_dataset.tar" in str(err.value) and "path:" in str(err.value)
    with pytest.raises(DataError, match="must be a directory holding"):
        dev = FIX / "tydiqa" / "tydiqa-goldp-v1.1-dev.json"
        download(dict(tydiqa=_qa(path=str(dev))), tmp_path / "raw", tmp_path)
    assert not (tmp_path / "raw").exists()  # nothing half-written


def test_catalogue_urls_are_the_published_ones() -> None:
    assert wikiann.REMOTE.url == "https://s3.amazonaws.com/datasets.huggingface.co/wikiann/1.1.0/panx_dataset.zip"
    assert [r.url for r in tydiqa.REMOTES] == [
        "https://storage.googleapis.com/tydiqa/v1.1/tydiqa-goldp-v1.1-train.json",
        "https://storage.googleapis.com/tydiqa/v1.1/tydiqa-goldp-v1.1-dev.json"]
