"""In-context evaluation: dataset readers on format fixtures, the download path, prompts and scoring."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lsnmt.io import DataError
from lsnmt.xelm import icl, icl_data
from lsnmt.xelm.icl_data import Example, Unavailable
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "icl"


def test_readers_build_the_papers_prompts() -> None:
    ex = icl_data.xnli(FIXTURES / "xnli", "de", "test")
    assert len(ex) == 4 and ex[0].shared == "Die Katze schläft auf der Matte., right? "
    assert ex[0].candidates == ("Yes, Eine Katze schläft.", "Also, Eine Katze schläft.", "No, Eine Katze schläft.")
    assert [e.label for e in ex] == [0, 2, 1, 0]  # entailment / contradiction / neutral -> Yes / No / Also
    story = icl_data.xstorycloze(FIXTURES / "xstorycloze", "en", "eval")
    assert story[1].shared == "Ann had a test. She studied all night. She was tired. She took the test. "
    assert story[1].label == 1 and len(story[1].candidates) == 2
    paws = icl_data.pawsx(FIXTURES / "pawsx", "en", "train")
    assert paws[0].candidates[0].startswith("Yes, ") and paws[0].label == 0 and paws[1].label == 1  # 1 = paraphrase
    assert len(icl_data.pawsx(FIXTURES / "pawsx", "de", "dev_2k")) == 3


def test_absent_data_says_what_to_fetch(tmp_path: Path) -> None:
    with pytest.raises(Unavailable, match=r"xnli: neither .*xnli/ nor .*XNLI-1\.0\.zip exists; fetch "
                                          r"https://dl\.fbaipublicfiles\.com/XNLI/XNLI-1\.0\.zip"):
        icl_data.obtain("xnli", tmp_path, download=False)
    with pytest.raises(Unavailable, match="no file 'spring2016.val.sw.tsv.split_20_80_eval.tsv'"):
        icl_data.xstorycloze(FIXTURES / "xstorycloze", "sw", "eval")


def test_download_path_fetches_and_extracts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "src" / "x-final.tar.gz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(FIXTURES / "pawsx" / "x-final", arcname="x-final")
    monkeypatch.setitem(icl_data.URLS, "pawsx", archive.as_uri())  # the real code path, a local "server"
    root = icl_data.obtain("pawsx", tmp_path / "icl", download=True, retries=1)
    assert (tmp_path / "icl" / "x-final.tar.gz").is_file()
    assert len(icl_data.pawsx(root, "en", "dev_2k")) == 4
    shutil.rmtree(tmp_path / "src")
    assert icl_data.obtain("pawsx", tmp_path / "icl", download=True) == root  # extracted: no fetch again


def test_offline_download_is_not_run_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(icl_data.URLS, "xnli", "http://127.0.0.1:9/XNLI-1.0.zip")  # nothing listens on port 9
    monkeypatch.setattr("lsnmt.data.fetch.BACKOFF_S", 0.0)
    with pytest.raises(Unavailable, match=r"xnli: .*127\.0\.0\.1"):
        icl_data.obtain("xnli", tmp_path, download=True, retries=1, timeout=2.0)


class _Piece:
    """A stand-in tokenizer: one id per character."""

    def encode(self, text: str) -> list[int]:
        return [4 + ord(c) % 30 for c in text]


def test_demonstrations_prompt_and_truncation() -> None:
    demos = [Example("a, right? ", ("Yes, b", "No, b"), 1, ("a", "b")), Example("c ", ("d", "e"), 0, ("c",))]
    text = icl.demonstrations(demos, 2, seed=1, run=0)
    assert sorted(text.splitlines()) == ["a, right? No, b", "c d"]
    case = icl.Case("t", "en", 2, 0, [Example("xy ", ("zz", "w"), 0, ("xy",))])
    icl.encode(case, "0123456789", _Piece(), eos=2, block=8)
    assert [len(s) for s in case.seqs] == [9, 9] and case.scored == [2, 1]  # left-truncated to block + 1
    assert case.seqs[0][-2:].tolist() == _Piece().encode("zz")


def test_accuracy_and_win_rate() -> None:
    case = icl.Case("t", "en", 0, 0, [Example("", ("a", "b"), 1, ()), Example("", ("a", "b", "c"), 0, ())])
    assert icl.accuracy(case, [-2.0, -1.0, -0.5, -1.0, -3.0]) == 1.0
    assert icl.accuracy(case, [-1.0, -2.0, -0.5, -1.0, -0.1]) == 0.0
    rows = [["xnli", 0, "seed", "de", 40.0, 1], ["xnli", 0, "seed", "en", 60.0, 1],
            ["xnli", 0, "dense", "de", 50.0, 1], ["xnli", 0, "dense", "en", 60.0, 1]]
    t3 = icl.table3(rows)["xnli@0"]
    assert t3["seed"] == {"accuracy": 50.0, "win_rate": 50.0}  # ties both win (x-elm Table 3)
    assert t3["dense"]["win_rate"] == 100.0 and np.isclose(t3["dense"]["accuracy"], 55.0)


def _tar_with(path: Path, name: str, *, link: str | None = None) -> None:
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo(name)
        if link is not None:
            info.type, info.linkname = tarfile.SYMTYPE, link
            tf.addfile(info)
        else:
            data = b"sentence1\tsentence2\tlabel\n"
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("name,link", [("../escaped.tsv", None), ("/tmp/lsnmt-escaped.tsv", None),
                                       ("x-final/en/../../../escaped.tsv", None), ("x-final/out", "../../..")])
def test_members_escaping_the_folder_are_refused(tmp_path: Path, name: str, link: str | None) -> None:
    root = tmp_path / "icl"
    root.mkdir()
    _tar_with(root / "x-final.tar.gz", name, link=link)
    with pytest.raises(DataError, match="outside the extraction folder; refusing"):
        icl_data.obtain("pawsx", root, download=False)
    assert not (tmp_path / "escaped.tsv").exists() and not Path("/tmp/lsnmt-escaped.tsv").exists()
    assert sorted(p.name for p in root.iterdir()) == ["x-final.tar.gz"]  # nothing half-extracted
    with zipfile.ZipFile(root / "XNLI-1.0.zip", "w") as zf:
        zf.writestr(name, "language\tgold_label\tsentence1\tsentence2\n")
    if link is None:
        with pytest.raises(DataError, match="outside the extraction folder; refusing"):
            icl_data.obtain("xnli", root, download=False)
        assert not (tmp_path / "escaped.tsv").exists()
