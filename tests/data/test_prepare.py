"""The prepare stage: filters with counted reasons, tags, and clear errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsnmt.data.prepare import prepare
from lsnmt.io import DataError, iter_lines

from .helpers import experiment, raw_corpus, write_lines

EVAL = {"en": ["Hello.", "Bye."], "de": ["Hallo.", "Tschüss."], "fr": ["Salut.", "Au revoir."]}


def _raw(tmp_path: Path) -> Path:
    en = ["a cat", "a cat", "", "x " * 300, "tiny words", "ﬁne ligature", "ok then"]
    de = ["eine Katze", "eine Katze", "leer", "lang", "this one is far far far far too long", "fein", "gut dann"]
    return raw_corpus(tmp_path / "raw", {"en-de": (en, de), "en-fr": (["one"], ["un"])}, EVAL)


def test_filters_counted_by_reason(tmp_path: Path) -> None:
    report = prepare(experiment(), _raw(tmp_path), tmp_path / "out")
    counts = report["train"]["en-de"]["bitext"]
    assert counts["input"] == 7
    # "tiny words" / "this one is far far far far too long" is kept: no character-ratio filter (lsnmt.data.clean)
    assert counts["dropped"] == {"empty": 1, "too_long": 1, "duplicate": 1}
    assert counts["kept"] == 4
    assert report["train"]["de-en"]["bitext"] == counts  # one pass feeds both directions
    assert json.loads((tmp_path / "out" / "report.json").read_text()) == report


def test_tags_normalisation_and_directions(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prepare(experiment(), _raw(tmp_path), out)
    src = list(iter_lines(out / "train" / "en-de" / "bitext.src"))
    assert src == ["<2de> a cat", "<2de> tiny words", "<2de> fine ligature", "<2de> ok then"]  # NFKC: ﬁ -> fi
    assert list(iter_lines(out / "train" / "de-en" / "bitext.src"))[0] == "<2en> eine Katze"
    assert list(iter_lines(out / "train" / "de-en" / "bitext.tgt"))[0] == "a cat"
    assert list(iter_lines(out / "test" / "fr-en.src")) == ["<2en> Salut.", "<2en> Au revoir."]
    assert list(iter_lines(out / "test" / "fr-en.tgt")) == ["Hello.", "Bye."]


def test_suffix_tags(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prepare(experiment(data={"tags": "src-tgt-suffix"}), _raw(tmp_path), out)
    assert list(iter_lines(out / "train" / "en-de" / "bitext.src"))[0] == "a cat <en> <2de>"


def test_line_count_mismatch_names_both_files(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": (["a", "b", "c"], ["x", "y"]), "en-fr": (["a"], ["b"])}, EVAL)
    with pytest.raises(DataError) as info:
        prepare(experiment(), raw, tmp_path / "out")
    msg = str(info.value)
    assert "en-de.en has 3 lines" in msg and "en-de.de has 2 lines" in msg
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    raw = _raw(tmp_path)
    write_lines(raw / "train" / "bitext" / "en-fr.fr", b"ok\n")
    write_lines(raw / "train" / "bitext" / "en-fr.en", b"fine\n")
    write_lines(raw / "train" / "bitext" / "en-fr.fr", b"bad \xff byte\n")
    with pytest.raises(DataError, match=r"en-fr\.fr:1: invalid UTF-8"):
        prepare(experiment(), raw, tmp_path / "out")


def test_invalid_utf8_replaced_and_counted(tmp_path: Path) -> None:
    raw = _raw(tmp_path)
    write_lines(raw / "train" / "bitext" / "en-fr.fr", b"bad \xff byte\n")
    write_lines(raw / "train" / "bitext" / "en-fr.en", b"bad byte\n")
    report = prepare(experiment(prepare={"invalid_utf8": "replace"}), raw, tmp_path / "out")
    assert report["train"]["en-fr"]["bitext"]["utf8_replaced"] == 1
    assert list(iter_lines(tmp_path / "out" / "train" / "en-fr" / "bitext.tgt")) == ["bad \ufffd byte"]


def test_nel_is_not_a_line_break(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": (["one\x85two", "three"], ["eins", "drei"]),
                                        "en-fr": (["a"], ["b"])}, EVAL)
    report = prepare(experiment(prepare={"normalization": "none"}), raw, tmp_path / "out")
    assert report["train"]["en-de"]["bitext"]["kept"] == 2


def test_language_without_data(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": (["a"], ["b"])}, EVAL)
    with pytest.raises(DataError, match="no training data left for direction en-fr"):
        prepare(experiment(), raw, tmp_path / "out")


def test_everything_filtered_is_an_error(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": ([""], ["b"]), "en-fr": (["a"], ["b"])}, EVAL)
    with pytest.raises(DataError, match="no training data left for direction de-en"):
        prepare(experiment(), raw, tmp_path / "out")


def test_missing_eval_split(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": (["a"], ["b"]), "en-fr": (["a"], ["b"])},
                     {"en": ["x"], "de": ["y"]})
    with pytest.raises(DataError, match="no valid data for direction en-fr"):
        prepare(experiment(), raw, tmp_path / "out")


def test_nul_and_bom_removed_and_counted(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": (["\ufeffa cat", "do\x00g"], ["eine Katze", "Hu\x00\x00nd"]),
                                        "en-fr": (["a"], ["b"])},
                     {**EVAL, "de": ["\ufeffHallo.", "Tschüss."]})
    out = tmp_path / "out"
    report = prepare(experiment(prepare={"normalization": "none"}), raw, out)
    assert list(iter_lines(out / "train" / "en-de" / "bitext.src")) == ["<2de> a cat", "<2de> dog"]
    assert list(iter_lines(out / "train" / "en-de" / "bitext.tgt")) == ["eine Katze", "Hund"]
    assert list(iter_lines(out / "test" / "de-en.src")) == ["<2en> Hallo.", "<2en> Tschüss."]
    assert list(iter_lines(out / "valid" / "en-de.tgt")) == ["Hallo.", "Tschüss."]
    for f in out.rglob("*"):
        if f.is_file() and f.name != "report.json":
            assert b"\x00" not in f.read_bytes() and "\ufeff".encode() not in f.read_bytes(), f
    assert report["removed"]["train/bitext/en-de.en"] == {"nul": 1, "bom": 1}
    assert report["removed"]["train/bitext/en-de.de"] == {"nul": 2, "bom": 0}
    assert report["removed"]["valid/mw/mw.de"] == {"nul": 0, "bom": 1}  # read by two directions, counted once
    assert set(report["removed"]) == {"train/bitext/en-de.en", "train/bitext/en-de.de", "valid/mw/mw.de",
                                      "test/mw/mw.de"}


def test_long_line_without_spaces_is_too_long(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": (["x" * 1_000_000, "ok"], ["y", "gut"]), "en-fr": (["a"], ["b"])},
                     EVAL)
    report = prepare(experiment(), raw, tmp_path / "out")
    assert report["train"]["en-de"]["bitext"]["dropped"]["too_long"] == 1
    assert report["train"]["en-de"]["bitext"]["kept"] == 1


def test_empty_direction_names_files_and_reasons(tmp_path: Path) -> None:
    raw = raw_corpus(tmp_path / "raw", {"en-de": (["a"], ["b"]), "en-fr": (["", "x" * 3000], ["b", "c"])}, EVAL)
    with pytest.raises(DataError) as info:
        prepare(experiment(), raw, tmp_path / "out")
    msg = str(info.value)
    assert "no training data left for direction en-fr" in msg
    assert "train/bitext/en-fr.*: 2 pairs, dropped 1 empty, 1 too_long" in msg
    assert not (tmp_path / "out").exists()


def test_heldout_test_set_is_disjoint_from_training(tmp_path: Path) -> None:
    """``heldout``: n pairs per language pair become ``test.{corpus}``; training keeps no pair sharing a side with
    them (Tatoeba repeats English sentences with alternative translations)."""
    en = [f"sentence {i}" for i in range(40)] + ["sentence 0"] * 3  # "sentence 0" has three more translations
    de = [f"Satz {i}" for i in range(40)] + ["Satz null", "Satz zero", "Nullsatz"]
    fr = (["one", "two", "3", "4"], ["un", "deux", "3", "4"])
    raw = raw_corpus(tmp_path / "raw", {"en-de": (en, de), "en-fr": fr}, EVAL)
    exp = experiment(data={"sources": [{"name": "bitext", "kind": "embedded", "splits": ["train"], "heldout": 10},
                                       {"name": "mw", "kind": "embedded", "splits": ["valid", "test"]}]})
    assert list(exp.data.test_sets) == ["test", "test.bitext"]
    out = tmp_path / "out"
    counts = prepare(exp, raw, out)["train"]["en-de"]["bitext"]
    held_en = list(iter_lines(out / "test.bitext" / "de-en.tgt"))
    held_de = list(iter_lines(out / "test.bitext" / "en-de.tgt"))
    assert counts["heldout"] == len(held_en) == len(held_de) == 10  # 43 pairs // 4
    assert [x.removeprefix("<2de> ") for x in iter_lines(out / "test.bitext" / "en-de.src")] == held_en
    train_en = list(iter_lines(out / "train" / "de-en" / "bitext.tgt"))
    train_de = list(iter_lines(out / "train" / "en-de" / "bitext.tgt"))
    assert not set(held_en) & set(train_en) and not set(held_de) & set(train_de)
    assert counts["kept"] == len(train_en) == 43 - 10 - counts["dropped"]["heldout_overlap"]
    again = tmp_path / "again"
    prepare(exp, raw, again)  # the draw is seeded: the same test set every run
    assert list(iter_lines(again / "test.bitext" / "de-en.tgt")) == held_en
    with pytest.raises(DataError, match="too few to hold out"):
        prepare(exp, raw_corpus(tmp_path / "small", {"en-de": (en, de), "en-fr": (["one"], ["un"])}, EVAL),
                tmp_path / "small_out")
