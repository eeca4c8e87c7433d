"""Each paper source's reader against a real HTTP server on 127.0.0.1 serving small archives in the published
layout (the catalogue's URL paths kept, the host replaced with ``mirror:``), and the one-line instruction of each
source that cannot be downloaded."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from lsnmt.config import SourceConfig
from lsnmt.data.download import download
from lsnmt.data.sources import mc4
from tests.data.test_download import Served, experiment, manifest, no_backoff, read, server  # noqa: F401 (fixtures)


def _gz_lines(docs: list[str]) -> bytes:
    buf = io.BytesIO()
    with gzip.open(buf, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"text": d, "timestamp": "2020", "url": "u"}) + "\n" for d in docs)
    return buf.getvalue()


def test_mc4_reads_the_first_shards_and_its_own_validation_source(server: Served, tmp_path: Path) -> None:  # noqa: F811
    """x-elm Sec. 5.1: at most the first N training shards; validation from a capped source of its own."""
    base = "/datasets/allenai/c4/resolve/x/multilingual"
    for i in range(3):
        server.files[f"{base}/c4-de.tfrecord-{i:05d}-of-02048.json.gz"] = _gz_lines([f"train {i}.{j}"
                                                                                     for j in range(2)])
    for i in range(2):
        server.files[f"{base}/c4-de-validation.tfrecord-{i:05d}-of-00016.json.gz"] = _gz_lines(
            [f"valid {i}.{j}" for j in range(3)])
    mirror = server.url(base)
    sources = (SourceConfig(name="mc4", kind="mc4", splits=("train",), languages=("de",), mirror=mirror,
                            shards={"de": 2}),
               SourceConfig(name="mc4_valid", kind="mc4", splits=("valid",), languages=("de",), mirror=mirror,
                            max_pairs=2))
    exp = experiment(tmp_path, *sources, languages=("en", "de"), train_directions="none", eval_directions="none",
                     tags="none")
    download(exp, tmp_path / "raw")
    assert read(tmp_path / "raw/train/mc4/mw.de") == ["train 0.0", "train 0.1", "train 1.0", "train 1.1"]
    assert read(tmp_path / "raw/valid/mc4_valid/mw.de") == ["valid 0.0", "valid 0.1"]
    assert sorted(p.rsplit("/", 1)[1] for p, _ in server.requests) == [
        "c4-de-validation.tfrecord-00000-of-00016.json.gz", "c4-de.tfrecord-00000-of-02048.json.gz",
        "c4-de.tfrecord-00001-of-02048.json.gz"]
    assert manifest(tmp_path / "raw")["train/mc4/mw.de"]["source"].count(mirror) == 2
    assert len(mc4.plan(sources[0], ("de",))[("train", "de")]) == 2
