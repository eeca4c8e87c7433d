"""Each paper source's reader against a real HTTP server on 127.0.0.1 serving small archives in the published
layout (the catalogue's URL paths kept, the host replaced with ``mirror:``), and the one-line instruction of each
source that cannot be downloaded."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path
from urllib.parse import urlparse

import pytest
import sentencepiece as spm
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers import tokenizer_spm

from lsnmt.data import spbleu
from lsnmt.data.config import DownloadConfig, SourceConfig
from lsnmt.data.sources import Remote, iwslt, mc4, wmt14
from lsnmt.io import DataError
from tests.data.test_download import (  # noqa: F401 (fixtures)
    Served,
    download,
    experiment,
    iwslt17_zip,
    manifest,
    no_backoff,
    read,
    server,
)


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


def _tgz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _served(remote: Remote, srv: Served) -> Remote:
    """``remote`` with its real URL path on the test server (a published checksum cannot match a fixture)."""
    return dataclasses.replace(remote, url=srv.url(urlparse(remote.url).path), md5=None, sha256=None)


def test_iwslt14_de_en_from_fairseqs_copy_and_the_release_for_the_others(server: Served, tmp_path: Path,  # noqa: F811
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    tags = b"<url>u</url>\n<talkid>1</talkid>\n<title>Title</title>\n" + b"".join(b"Line %d\n" % i for i in range(30))
    seg = '<seg id="1"> It\u2019s {l} </seg>\n'
    server.files["/fairseq/data/iwslt14/de-en.tgz"] = _tgz(
        {f"de-en/train.tags.de-en.{lang}": tags for lang in ("de", "en")}
        | {f"de-en/IWSLT14.TED.tst2010.de-en.{lang}.xml": seg.format(l=lang.upper()).encode() for lang in ("de", "en")})
    monkeypatch.setitem(iwslt.IWSLT14, "de", _served(iwslt.IWSLT14["de"], server))
    src = SourceConfig(name="iwslt14", kind="iwslt14", splits=("train", "valid", "test"))
    download(experiment(tmp_path, src, languages=("en", "de")), tmp_path / "raw")
    assert read(tmp_path / "raw/train/iwslt14/en-de.de")[:2] == ["title", "line 0"]  # lowercased (Xu et al.)
    assert read(tmp_path / "raw/test/iwslt14/en-de.en") == ["it's en"]
    assert [p for p, _ in server.requests] == ["/fairseq/data/iwslt14/de-en.tgz"]
    with pytest.raises(DataError, match=r"IWSLT'14 ar-en has no working download URL .* fetch 2014-01\.tgz .*"
                                        r"1GnBarJIbNgEIIDvUyKDtLmv35Qcxg6Ed.* set `path:`"):
        download(experiment(tmp_path, src, languages=("en", "ar", "de")), tmp_path / "raw2")
    assert len(server.requests) == 1 and not (tmp_path / "raw2").exists()


def test_wmt14_wiki_headlines_hi_from_wmt14_and_ru_from_wmt15(server: Served, tmp_path: Path,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    served = {
        wmt14.WIKI_TITLES: {"wiki/hi-en/wiki-titles.hi-en": "नमस्ते ||| Hello\n".encode()},
        wmt14.WIKI_TITLES_15: {"wiki/ru-en/wiki.ru-en": "Привет ||| Hi\n".encode(),
                               "wiki/fi-en/titles.fi-en": b"Hei ||| Hi\n"},
        wmt14.COMMONCRAWL: {f"commoncrawl.ru-en.{x}": f"cc {x}\n".encode() for x in ("ru", "en")},
        wmt14.NEWS_COMMENTARY: {f"training/news-commentary-v9.ru-en.{x}": f"nc {x}\n".encode() for x in ("ru", "en")},
    }
    seg = '<seg id="1">{}</seg>\n'
    served[wmt14.DEV] = {f"dev/newstest2013.{x}": f"v {x}\n".encode() for x in ("ru", "en")} | {
        f"dev/newsdev2014.{x}": f"v {x}\n".encode() for x in ("hi", "en")}
    served[wmt14.TEST] = {f"test-full/newstest2014-{x}en-{side}.sgm": seg.format(f"t {side}").encode()
                          for x in ("hi", "ru") for side in (f"ref.{x}", "src.en")}
    for split in ("train", "valid", "test"):
        table = []
        for remote, members in wmt14.TABLES[split]:
            if remote in served:
                server.files[urlparse(remote.url).path] = _tgz(served[remote])
            table.append((_served(remote, server), members))
        monkeypatch.setitem(wmt14.TABLES, split, tuple(table))
    src = SourceConfig(name="wmt", kind="wmt14", splits=("train", "valid", "test"))
    download(experiment(tmp_path, src, languages=("en", "hi", "ru")), tmp_path / "raw")
    assert read(tmp_path / "raw/train/wmt/en-ru.ru") == ["cc ru", "nc ru", "Привет"]
    assert read(tmp_path / "raw/valid/wmt/en-hi.hi") == ["v hi"] and read(tmp_path / "raw/test/wmt/en-ru.ru") == [
        "t ref.ru"]
    assert read(tmp_path / "raw/train/wmt/en-hi.en") == ["Hello"]
    assert sorted(p.name for p in (tmp_path / "cache/wmt14").glob("*.tgz")) == [
        "dev.tgz", "test-full.tgz", "training-parallel-commoncrawl.tgz", "training-parallel-nc-v9.tgz",
        "wiki-titles.tgz", "wmt15-wiki-titles.tgz"]


def test_iwslt17_from_the_hugging_face_copy(server: Served, tmp_path: Path,  # noqa: F811
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    iwslt17_zip(tmp_path / "release.zip")
    server.files[urlparse(iwslt.IWSLT17.url).path] = (tmp_path / "release.zip").read_bytes()
    monkeypatch.setattr(iwslt, "IWSLT17", _served(iwslt.IWSLT17, server))
    src = SourceConfig(name="iwslt17", kind="iwslt17", splits=("train", "valid", "test"))
    download(experiment(tmp_path, src, languages=("en", "it")), tmp_path / "raw")
    assert read(tmp_path / "raw/train/iwslt17/en-it.it") == ["Hello it", "World it"]
    assert [p for p, _ in server.requests] == [urlparse(iwslt.IWSLT17.url).path]


def _tiny_spm(tmp_path: Path) -> bytes:
    model = io.BytesIO()
    sentences = [f"the cat {i} sat on the mat {i % 7}" for i in range(200)]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=model, vocab_size=40,
                                   minloglevel=2)
    return model.getvalue()


def test_spbleu_model_goes_where_sacrebleu_looks(server: Served, tmp_path: Path,  # noqa: F811
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """sacrebleu #274: the tinyurl answers 403 to urllib; the direct URL is fetched, checked and named as sacreBLEU
    expects, so that sacreBLEU scores with it offline."""
    data = _tiny_spm(tmp_path)
    path = "/large_objects/nllb/models/spm_200/flores200_sacrebleu_tokenizer_spm.model"
    server.files[path] = data
    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(tmp_path / "sacrebleu"))
    dl = DownloadConfig(retries=1, timeout=5.0)
    monkeypatch.setitem(spbleu.MODELS, "flores200", (server.url(path), "0" * 32))
    with pytest.raises(DataError, match=r"spBLEU \(flores200\): checksum mismatch .* copy it to exactly .*"
                                        r"flores200sacrebleuspm"):
        spbleu.fetch_models(("spbleu-flores200",), dl)
    monkeypatch.setitem(spbleu.MODELS, "flores200", (server.url(path), hashlib.md5(data).hexdigest()))
    [model] = spbleu.fetch_models(("bleu", "spbleu-flores200", "chrf"), dl)
    assert model == tmp_path / "sacrebleu" / "models" / "flores200sacrebleuspm" and model.read_bytes() == data
    assert spbleu.fetch_models(("spbleu-flores200",), dl) == [model] and len(server.requests) == 2  # kept
    server.files.clear()
    score = BLEU(tokenize="flores200").corpus_score(["the cat sat"], [["the cat sat"]])
    assert score.score == pytest.approx(100.0) and score.sys_len == len(spm.SentencePieceProcessor(
        model_proto=data).encode("the cat sat", out_type=str))  # pieces of the fetched model


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_mtdata_corpora_by_name(server: Served, tmp_path: Path) -> None:  # noqa: F811
    """mtdata's index gives URL, members and format; the files come from the test server in the real layouts
    (OPUS moses zip, statmt TSV.gz, WMT dev tgz with SGML), with a mirror for each source."""
    server.files["/opus/de-en.txt.zip"] = _zip({"CCMatrix.de-en.de": b"Hallo Welt\nGuten Tag\n",
                                                "CCMatrix.de-en.en": b"Hello world\nGood day\n", "README": b"x"})
    buf = io.BytesIO()
    with gzip.open(buf, "wt", encoding="utf-8") as fh:
        fh.write("Danke\tThanks\nBitte\tPlease\n")
    server.files["/statmt/news-commentary-v16.de-en.tsv.gz"] = buf.getvalue()
    server.files["/statmt/wikititles-v3.de-en.tsv"] = b"Haus\tHouse\n"
    sgm = '<refset>\n<doc docid="1">\n<p>\n<seg id="1">{}</seg>\n</p>\n</doc>\n</refset>\n'
    server.files["/statmt/dev.tgz"] = _tgz({"dev/newstest2019-deen-src.de.sgm": sgm.format("Ja").encode(),
                                            "dev/newstest2019-deen-ref.en.sgm": sgm.format("Yes").encode()})
    sources = (SourceConfig(name="ccmatrix", kind="mtdata", splits=("train",), mirror=server.url("/opus"),
                            datasets={"train": ("OPUS-ccmatrix-v1",)}),
               SourceConfig(name="wmt", kind="mtdata", splits=("train", "valid", "test"), mirror=server.url("/statmt"),
                            datasets={"train": ("Statmt-news_commentary-16", "Statmt-wikititles-3"),
                                      "valid": ("Statmt-newstest_deen-2019",), "test": ("Statmt-newstest_deen-2019",)}))
    download(experiment(tmp_path, *sources, languages=("en", "de")), tmp_path / "raw")
    raw = tmp_path / "raw"
    assert read(raw / "train/ccmatrix/en-de.de") == ["Hallo Welt", "Guten Tag"]
    assert read(raw / "train/ccmatrix/en-de.en") == ["Hello world", "Good day"]  # pivot first, sides swapped
    assert read(raw / "train/wmt/en-de.en") == ["Thanks", "Please", "House"]  # datasets in the listed order
    assert read(raw / "valid/wmt/en-de.de") == ["Ja"]
    assert {p for p, _ in server.requests} == {"/opus/de-en.txt.zip", "/statmt/news-commentary-v16.de-en.tsv.gz",
                                               "/statmt/dev.tgz", "/statmt/wikititles-v3.de-en.tsv"}
    assert (tmp_path / "cache/mtdata/OPUS-ccmatrix-v1-deu-eng_de-en.txt.zip").is_file()
    with pytest.raises(DataError, match="mtdata has no dataset 'OPUS-nosuchcorpus-v1'"):
        download(experiment(tmp_path, dataclasses.replace(sources[0], datasets={"train": ("OPUS-nosuchcorpus-v1",)}),
                            languages=("en", "de"), eval_directions="none"), tmp_path / "raw2")
