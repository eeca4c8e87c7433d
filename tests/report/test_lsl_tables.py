"""LSL Tables 2, 3, 5-8, 10-12 built from fixture evaluate outputs of ``flores10_lsl`` / ``flores10_lsl_zeroshot``
(written as the evaluate stage writes them), and "not run" without them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsnmt.experiment.params import Params
from lsnmt.report import paper as paper_tables
from lsnmt.report import render
from lsnmt.report.paper_table import Built, Cell, build
from lsnmt.report.runs import Results
from lsnmt.report.specs import BINDINGS
from tests.report.fixtures import write_evaluate

ROOT = Path(__file__).resolve().parents[2]
LANGS = ["de", "en", "es", "fr", "it", "ja", "ko", "pt", "sw", "zh"]
BASE = {"naive": 40.0, "adapters_enc_srctgt_256": 41.0, "lsl_nas": 42.0, "lsl_nas_dense": 43.0,
        "lsl_s12_t14_16": 41.5, "sd_baseline": 39.0, "lsl_nas_sd": 42.5, "pair_adapters_enc_512": 40.5,
        "sd_adapters_512": 41.2}


def score(method: str, src: str, tgt: str) -> float:
    """A distinct, known score per (method, direction)."""
    return BASE[method] + LANGS.index(src) + 0.1 * LANGS.index(tgt)


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory, params: Params) -> Results:
    root = tmp_path_factory.mktemp("lsl")
    write_evaluate(root / "results", params.get("flores10_lsl"), list(BASE)[:8], score,
                   metrics=("chrf", "spbleu-flores101", "comet"), not_significant=frozenset({"de-pt", "fr-sw"}))
    write_evaluate(root / "results", params.get("flores10_lsl_zeroshot"), ["naive", "sd_adapters_512", "lsl_nas_sd"],
                   score)
    prepared = root / "data" / "flores10_lsl" / "prepared"
    prepared.mkdir(parents=True)
    report = {"train": {"de-en": {"wmt21": {"input": 2000, "kept": 1500}, "ccmatrix": {"input": 90, "kept": 80}},
                        "sw-zh": {"ccmatrix": {"input": 10, "kept": 7}}}}
    (prepared / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return Results(params, root / "results", ROOT / "reports" / "params.csv", root / "data")


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory, params: Params) -> Results:
    root = tmp_path_factory.mktemp("none")
    return Results(params, root / "results", ROOT / "reports" / "params.csv", root / "data")


def table(results: Results, number: str) -> Built:
    binding = BINDINGS[("lsl", f"table{number}")]
    return build(paper_tables.meta("lsl", number), paper_tables.load("lsl", number), binding, results)


def cell(built: Built, keys: tuple[str, ...], column: str) -> Cell:
    hits = [c for c in built.cells if c.keys == keys and c.column == column]
    assert len(hits) == 1, (keys, column)
    return hits[0]


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


INTO = "Translating into the language (X→ )"
FROM = "Translating from the language ( → X)"


def test_table2_per_language_means(full: Results, empty: Results) -> None:
    built = table(full, "2")
    into_de = mean([score("lsl_nas_dense", s, "de") for s in LANGS if s != "de"])
    assert cell(built, (INTO, "LSL-NAS"), "DE").ours == pytest.approx(into_de)
    from_sw = mean([score("adapters_enc_srctgt_256", "sw", t) for t in LANGS if t != "sw"])
    assert cell(built, (FROM, "Language Adapters ENC (SRC+TGT) 256"), "SW").ours == pytest.approx(from_sw)
    assert cell(table(empty, "2"), (INTO, "LSL-NAS"), "DE").ours is None


def test_table3_and_table10_and_table12_averages(full: Results, empty: Results) -> None:
    avg = {m: mean([score(m, s, t) for s in LANGS for t in LANGS if s != t]) for m in BASE}
    assert cell(table(full, "3"), ("LSL (SRC={1, 2} & TGT={14, 15, 16})",), "CHRF").ours == pytest.approx(
        avg["lsl_s12_t14_16"])
    t10 = table(full, "10")
    assert cell(t10, ("Language-Pair Adapters ENC 512", ""), "SPBLEU").ours == pytest.approx(
        avg["pair_adapters_enc_512"])
    assert cell(t10, ("+ hidden dim 640", "Language Adapters ENC 128"), "CHRF").method is None  # no such method
    t12 = table(full, "12")
    comet = cell(t12, ("+ Dense Pre-training", "LSL-NAS"), "COMET")
    assert comet.kind == "comet" and comet.ours == pytest.approx(avg["lsl_nas_dense"])
    assert render.fmt(0.48357, "comet") == "0.4836"
    for number, keys in (("3", ("LSL-NAS",)), ("12", ("LSL-NAS", ""))):
        got = cell(table(empty, number), keys, "CHRF")
        assert got.method == "lsl_nas" and got.ours is None
    assert "not run" in render.markdown(table(empty, "12"))


def test_table5_mixes_separate_and_shared_decoder_parameter_counts(full: Results) -> None:
    built = table(full, "5")
    assert cell(built, ("Separate Decoder Baseline", ""), "|θ|").ours == 304559104  # lsl-separate-decoder, Table 1
    assert cell(built, ("Shared Decoder Baseline", ""), "|θ|").ours == 191050240  # lsl-shared-decoder, Table 5
    assert cell(built, ("LSL-NAS-SD", ""), "CHRF").ours == pytest.approx(
        mean([score("lsl_nas_sd", s, t) for s in LANGS for t in LANGS if s != t]))
    assert cell(built, ("+ hidden dim 704", "Shared Decoder Baseline"), "CHRF").ours is None  # not in the fixture
    assert cell(built, ("Shared Decoder Adapters 512", ""), "CHRF").method is None


def test_table6_zero_shot_averages(full: Results, empty: Results, params: Params) -> None:
    built = table(full, "6")
    exp = params.get("flores10_lsl_zeroshot")
    zero = [p for p in exp.data.eval_pairs if p not in exp.data.train_pairs]
    eur, cjk = {"de", "en", "es", "fr", "it", "pt"}, {"ja", "ko", "zh"}
    want = mean([score("lsl_nas_sd", s, t) for s, t in zero if s in eur and t in cjk])
    assert all(s != "en" for s, t in zero if s in eur and t in cjk)  # en-ja etc. are trained, not zero-shot
    assert cell(built, ("EUR → CJK",), "LSL-NAS-SD").ours == pytest.approx(want)
    no_sw = mean([score("naive", s, t) for s, t in zero if t != "sw"])
    assert cell(built, ("Zero-shot Average (w/o *→SW)",), "Baseline").ours == pytest.approx(no_sw)
    overall = mean([score("sd_adapters_512", s, t) for s, t in exp.data.eval_pairs])
    assert cell(built, ("Overall Average",), "Adapters").ours == pytest.approx(overall)
    assert cell(table(empty, "6"), ("EUR → CJK",), "LSL-NAS-SD").ours is None


def test_table7_counts_our_prepared_pairs_in_the_upper_triangle(full: Results, empty: Results) -> None:
    built = table(full, "7")
    assert cell(built, ("DE",), "EN").ours == 1580  # kept, summed over corpora
    assert cell(built, ("SW",), "ZH").ours == 7
    assert cell(built, ("EN",), "ES").ours is None and cell(built, ("EN",), "ES").method == "data"  # not prepared
    assert cell(built, ("FR",), "ES").method is None  # lower triangle: not bound
    assert cell(table(empty, "7"), ("DE",), "EN").ours is None


def test_table8_matrix_with_significance_marks(full: Results, empty: Results) -> None:
    built = table(full, "8")
    right = cell(built, ("right", "DE →"), "PT")
    assert right.ours == pytest.approx(score("lsl_nas_dense", "de", "pt")) and right.mark == "†"
    left = cell(built, ("left", "DE →"), "PT")
    assert left.ours == pytest.approx(score("naive", "de", "pt")) and left.mark == "†"
    assert cell(built, ("right", "EN →"), "IT").mark == ""  # significant in the fixture, though the paper marks it
    assert cell(built, ("left", "ZH →"), "ZH").method is None  # the diagonal
    header, rows = render.grid(built)
    line = next(r for r in rows if r[:2] == ["right", "FR →"])
    assert line[header.index("SW (ours)")] == f"{score('lsl_nas_dense', 'fr', 'sw'):.2f}†"
    none = table(empty, "8")
    assert cell(none, ("right", "DE →"), "PT").ours is None and cell(none, ("right", "DE →"), "PT").mark == ""
    header, rows = render.grid(none)
    assert next(r for r in rows if r[:2] == ["right", "DE →"])[header.index("PT (ours)")] == "not run"


def test_table11_group_pairs_and_difference(full: Results, empty: Results) -> None:
    built = table(full, "11")
    eur, cjk = ["de", "en", "es", "fr", "it", "pt"], ["ja", "ko", "zh"]
    base = mean([score("naive", s, t) for s in eur for t in cjk])
    ours = mean([score("lsl_nas_dense", s, t) for s in eur for t in cjk])
    assert cell(built, ("EUR → CJK",), "Sep. Decoder").ours == pytest.approx(base)
    assert cell(built, ("EUR → CJK",), "∆").ours == pytest.approx(ours - base)
    assert cell(table(empty, "11"), ("EUR → CJK",), "∆").ours is None
