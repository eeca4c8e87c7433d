"""The papers' tables in reports/paper/: index <-> files, shapes and spot values read by hand from the papers'
text (the files in the project's shared papers folder), the paper's own cross-checks, and the cell parser.

SHAPES and SPOTS were written from the paper text, not from the CSVs: (rows, columns) count the printed data
rows and the key columns plus the printed value columns.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest

from lsnmt.io import DataError
from lsnmt.report.paper import ROOT, index, number, numbers
from lsnmt.report.paper import load as _load

load = functools.lru_cache(maxsize=None)(_load)  # read each table once; tests only read the frames

SHAPES: dict[tuple[str, str], tuple[int, int]] = {
    # LMS-FD (v1): Methods + 8 languages + avg. + 2 #params | Methods + 2 x 5 groups + 2 #params | ...
    ("lmsfd", "1"): (3, 12), ("lmsfd", "2"): (8, 12), ("lmsfd", "3"): (11, 13), ("lmsfd", "4"): (4, 7),
    ("lmsfd", "5"): (4, 7), ("lmsfd", "6"): (4, 4), ("lmsfd", "7"): (4, 27), ("lmsfd", "8"): (4, 8),
    ("lmsfd", "9"): (13, 12),
    # CLM: Model + Model Size + 2 x 5 | + Enc + Dec | rank + 4 x (enc, dec) | ... | 94 languages in two halves
    ("clm", "1"): (6, 12), ("clm", "2"): (6, 12), ("clm", "3"): (9, 14), ("clm", "4"): (5, 9),
    ("clm", "5"): (3, 5), ("clm", "6"): (5, 5), ("clm", "7"): (6, 4), ("clm", "8"): (3, 2), ("clm", "9"): (7, 7),
    ("clm", "10"): (94, 5), ("clm", "11"): (94, 5),
    # LSL: Model + base + CHRF SPBLEU |θ| |θeff| | direction + Model + 10 languages | panel + source + 10 | ...
    ("lsl", "1"): (17, 6), ("lsl", "2"): (6, 12), ("lsl", "3"): (5, 3), ("lsl", "4"): (3, 5), ("lsl", "5"): (13, 6),
    ("lsl", "6"): (10, 4), ("lsl", "7"): (9, 10), ("lsl", "8"): (20, 12), ("lsl", "9"): (20, 12),
    ("lsl", "10"): (18, 6), ("lsl", "11"): (8, 4), ("lsl", "12"): (8, 5), ("lsl", "13"): (13, 4),
    # x-elm: Lang. + XGLM + 2 x 4 | group + Lang + 5 | setting + Model + 3 x 2 | ... (Table 6: prompts, skipped)
    ("xelm", "1"): (17, 10), ("xelm", "2"): (8, 7), ("xelm", "3"): (11, 8), ("xelm", "4"): (8, 5),
    ("xelm", "5"): (20, 3), ("xelm", "7"): (17, 9), ("xelm", "8"): (21, 5), ("xelm", "9"): (11, 17),
    ("xelm", "10"): (11, 13), ("xelm", "11"): (11, 9),
}

SB, LN, DP = "Separate Decoder Baseline", "LSL-NAS", "+ Dense Pre-training"
INTO, FROM = "Translating into the language (X→ )", "Translating from the language ( → X)"
SPOTS: list[tuple[str, str, tuple[str, ...], str, str]] = [
    ("lmsfd", "1", ("Naive MMT",), "ar", "25.03"), ("lmsfd", "1", ("FD",), "avg.", "+1.17"),
    ("lmsfd", "1", ("FD-LS",), "#params / Inference", "149M"), ("lmsfd", "1", ("FD-LS",), "he", "+2.08"),
    ("lmsfd", "2", ("CLSR",), "fa", "-0.23"), ("lmsfd", "2", ("LMS+FD-Share",), "#params / Inference", "49M"),
    ("lmsfd", "2", ("CLSR*",), "avg.", "+0.88"), ("lmsfd", "2", ("Switch Transformer",), "#params / Training", "149M"),
    ("lmsfd", "3", ("Switch Transformer",), "xx→en / low", "-0.31"),
    ("lmsfd", "3", ("LMS+FD-Share, d = 16",), "#params / Inference", "244M"),
    ("lmsfd", "3", ("CLSR",), "en→xx / WR (%)", "52"), ("lmsfd", "3", ("Naive MMT",), "xx→en / WR (%)", "-"),
    ("lmsfd", "4", ("LMS",), "Sampled Language / qu", "+3.61"),
    ("lmsfd", "4", ("LMS+FD-Share",), "#params / Inf.", "273M"),
    ("lmsfd", "4", ("Naive MNER",), "WR (%)", "-"),
    ("lmsfd", "5", ("LMS",), "Sampled Language / bn", "-0.59"), ("lmsfd", "5", ("LMS+FD-Share",), "avg.", "+1.22"),
    ("lmsfd", "5", ("LMS+FD-LS",), "#params / Inf.", "287M"),
    ("lmsfd", "6", ("Naive MMT",), "#params", "61M"), ("lmsfd", "6", ("LMS, att only",), "avg. BLEU", "+1.32"),
    ("lmsfd", "6", ("LMS, att+ffn",), "#params", "96M"),
    ("lmsfd", "7", ("Naive NER",), "az", "90.12"), ("lmsfd", "7", ("LMS",), "qu", "80.4"),
    ("lmsfd", "7", ("LMS-FD-Share",), "WR (%)", "88"), ("lmsfd", "7", ("LMS-FD-LS",), "en", "84.35"),
    ("lmsfd", "7", ("LMS",), "WR (%)", "96%"),
    ("lmsfd", "8", ("LMS",), "bn", "77.1"), ("lmsfd", "8", ("LMS+FD-Share",), "avg.", "76.53"),
    ("lmsfd", "8", ("Naive MQA",), "ko", "61.60"),
    ("lmsfd", "9", ("Naive MMT",), "en→xx / med", "42.3"),
    ("lmsfd", "9", ("Switch Transformer, E = 16",), "extra #params / Training", "189M"),
    ("lmsfd", "9", ("LMS, d = 60",), "xx→en / all", "31.81"), ("lmsfd", "9", ("LMS, d = 4",), "en→xx / WR (%)", "87"),
    ("lmsfd", "9", ("LMS, d = 36",), "en→xx / low", "26.3"),
    ("clm", "1", ("Multilingual",), "Model Size", "76.96M"), ("clm", "1", ("sCLM♢",), "xx-en / WR", "97.87"),
    ("clm", "1", ("Deep Transformer",), "en-xx / Med", "+4.58"), ("clm", "1", ("Multilingual",), "en-xx / WR", "–"),
    ("clm", "2", ("+Adapter",), "xx-en / WR", "76.92"), ("clm", "2", ("mCLM♢",), "Model Size", "98.09M"),
    ("clm", "2", ("Multilingual",), "xx-en / High", "27.70"),
    ("clm", "3", ("LS",), "en-xx / Low", "-1.91"), ("clm", "3", ("sCLM-E",), "Enc", "✓"),
    ("clm", "3", ("sCLM-E",), "Dec", ""), ("clm", "3", ("mCLM-D",), "Dec", "✓"),
    ("clm", "3", ("Dedicated",), "Model Size", "153.70M"), ("clm", "3", ("LS",), "xx-en / WR", "23.70"),
    ("clm", "4", ("1",), "tr / enc", "ko"),
    ("clm", "4", ("1",), "tr / dec", "ja"), ("clm", "4", ("5",), "hi / dec", "si"),
    ("clm", "4", ("3",), "it / enc", "fr"),
    ("clm", "5", ("mCLM",), "English-Centric / TED", "–"), ("clm", "5", ("sCLM",), "Zero-Shot / Flores", "80.0%"),
    ("clm", "5", ("Multilingual",), "English-Centric / TED", "20.5%"),
    ("clm", "6", ("WMT-5",), "Multilingual", "5.41 (51.0)"), ("clm", "6", ("IWSLT-17",), "Pivot", "19.80"),
    ("clm", "6", ("Europral w/o overlap",), "+mCLM-D", "25.68 (0.46)"),
    ("clm", "7", ("En-It",), "train", "231.6K"), ("clm", "7", ("It-Nl",), "test", "1669"),
    ("clm", "7", ("Nl-Ro",), "valid", "913"),
    ("clm", "8", ("Low",), "Language", "am, be, ha, ig, kk, kn, ky, mr, my, oc, or, ps, te, zu"),
    ("clm", "8", ("Med",), "Language", "af, as, az, cy, ga, gl, gu, hi, ka, km, ku, ml, ne, pa, ta, tg, ur, uz, xh"),
    ("clm", "8", ("High",), "Language", "ar, bg, bn, bs, ca, cs, da, de, el, es, et, fa, fi, fr, he, hr, hu, id, is, "
     "it, ja, ko, lt, mk, ms, mt, nl, no, pl, pt, ro, ru, sk, sl, sr, sv, th, tr, uk, vi, zh"),
    ("clm", "9", ("sCLM",), "Decoding Speed (tokens/s)", "1143"), ("clm", "9", ("mCLM-top",), "Model Size", "224.61M"),
    ("clm", "9", ("+CLSR",), "xx-en / WR", "88.30"),
    ("clm", "10", ("af",), "Similar Languages", "fy nl de nn nb"), ("clm", "10", ("wa",), "Family", "-"),
    ("clm", "10", ("te",), "Genus", "Southern-central Dravidian"), ("clm", "10", ("km",), "Language", "Central Khmer"),
    ("clm", "10", ("tr",), "Similar Languages", "ko ja ml bs pl"),
    ("clm", "11", ("ka",), "Similar Languages", "bbg mk ru he nl"),
    ("clm", "11", ("tr",), "Similar Languages", "az tk eo et uz"), ("clm", "11", ("yi",), "Family", "indo-European"),
    ("clm", "11", ("ha",), "Genus", "West Chadic"),
    ("lsl", "1", (DP, LN), "CHRF", "46.8"), ("lsl", "1", ("LSL (SRC=∅ & TGT={13, 14, 15})", ""), "|θ|", "385M"),
    ("lsl", "1", (SB, ""), "|θeff|", "186M"), ("lsl", "1", ("+ hidden dim 768", SB), "|θ|", "509M"),
    ("lsl", "2", (INTO, LN), "KO", "27.0"), ("lsl", "2", (FROM, SB), "SW", "40.1"),
    ("lsl", "2", (FROM, "Language Adapters ENC (SRC+TGT) 256"), "ZH", "44.5"),
    ("lsl", "3", ("LSL (SRC={2, 3} & TGT={13, 14, 15})",), "SPBLEU", "27.1"), ("lsl", "3", (LN,), "CHRF", "46.4"),
    ("lsl", "3", ("LSL (SRC={1, 2} & TGT={14, 15, 16})",), "CHRF", "46.2"),
    ("lsl", "4", ("LS-FFN",), "|θ|", "394M"), ("lsl", "4", ("LS-ATTENTION",), "SPBLEU", "26.5"),
    ("lsl", "4", (LN,), "|θeff|", "186M"),
    ("lsl", "5", ("Shared Decoder Adapters 640", ""), "|θeff|", "199M"),
    ("lsl", "5", (DP, "LSL-NAS-SD"), "SPBLEU", "27.1"),
    ("lsl", "5", ("LSL (SRC={4} & TGT={13 − 16})", ""), "|θ|", "328M"),
    ("lsl", "6", ("SW → CJK",), "Baseline", "6.70"),
    ("lsl", "6", ("Zero-shot Average (w/o *→SW)",), "LSL-NAS-SD", "36.2"),
    ("lsl", "6", ("EUR → SW",), "LSL-NAS-SD", "11.7"),
    ("lsl", "7", ("DE",), "EN", "213M"), ("lsl", "7", ("EN",), "SW", "708K"), ("lsl", "7", ("SW",), "ZH", "962K"),
    ("lsl", "7", ("SW",), "EN", "−"), ("lsl", "7", ("FR",), "SW", "8M"),
    ("lsl", "8", ("left", "DE →"), "PT", "59.0†"), ("lsl", "8", ("right", "EN →"), "JA", "37.9"),
    ("lsl", "8", ("left", "ZH →"), "ZH", "−"), ("lsl", "8", ("right", "FR →"), "SW", "50.4†"),
    ("lsl", "9", ("left", "EN →"), "ZH", "33.3"), ("lsl", "9", ("right", "SW →"), "EN", "61.0"),
    ("lsl", "9", ("left", "KO →"), "PT", "44.7"),
    ("lsl", "10", ("Language-Pair Adapters ENC 512", ""), "|θ|", "1057M"),
    ("lsl", "10", ("+ hidden dim 640", "Language Adapters ENC 256"), "CHRF", "46.3"),
    ("lsl", "10", ("Language Adapters ENC+DEC 1024", ""), "|θeff|", "385M"),
    ("lsl", "11", ("CJK → SW",), "∆", "+2.3"), ("lsl", "11", ("EUR → EUR",), "Sep. Decoder", "59.1"),
    ("lsl", "11", ("SW → CJK",), "Ours", "24.4"),
    ("lsl", "12", (DP, "LSL-NAS-SD"), "COMET", "0.48357"), ("lsl", "12", (SB, ""), "COMET", "0.45285"),
    ("lsl", "12", ("Shared Decoder Adapters 512", ""), "SPBLEU", "25.6"),
    ("lsl", "13", ("LSL-NAS-SD", ""), "Speed GPU", "195.5 ± 4.7"), ("lsl", "13", ("+ hidden dim 768", SB), "Speed CPU",
                                                                     "48.4 ± 0.2"),
    ("lsl", "13", ("Language Adapters ENC+DEC 512", ""), "Speed GPU", "165.1 ± 4.5"),
    ("xelm", "1", ("Avg.",), "21.0B Training Tokens / Typ.", "11.77"),
    ("xelm", "1", ("HI",), "10.5B Training Tokens / Typ.", "11.25"), ("xelm", "1", ("SW",), "XGLM", "19.85"),
    ("xelm", "1", ("KO",), "10.5B Training Tokens / Dense", "7.79"),
    ("xelm", "2", ("Target", "HE"), "XGLM", "1817.07"), ("xelm", "2", ("Donor", "TR"), "LAPT / HMR", "12.72"),
    ("xelm", "2", ("Target", "AZ"), "x-elm Training / TF-IDFens*", "722.10"),
    ("xelm", "3", ("Few-shot", "Typ. (TRG)"), "XStoryCloze / Win Rate", "71.4%"),
    ("xelm", "3", ("Zero-shot", "TF-IDF (Ens.)"), "XNLI / Acc.", "45.10"),
    ("xelm", "3", ("Few-shot", "TF-IDF (Top-1)"), "PAWS-X / Acc.", "55.50"),
    ("xelm", "4", ("10.5 B", "1"), "# GPUs", "8"), ("xelm", "4", ("21.0 B", "16"), "# updates", "40,000"),
    ("xelm", "4", ("10.5 B", "8"), "grad acc.", "8"),
    ("xelm", "5", ("EN (English)",), "XGLM Size", "3,324.45"), ("xelm", "5", ("SW (Swahili)",), "mC4 Size (%)",
                                                                  "3.06 (0.05%)"),
    ("xelm", "5", ("SV (Swedish)",), "XGLM Size", ""), ("xelm", "5", ("PL (Polish)",), "mC4 Size (%)", "393.85 (–)"),
    ("xelm", "7", ("DE",), "k=16 Experts / Typ.", "14.5"), ("xelm", "7", ("KO",), "Dense", "7.78"),
    ("xelm", "7", ("Avg.",), "k=4 Experts / Typ.", "12.56"), ("xelm", "7", ("SW",), "k=16 Experts / Typ.", "16.43"),
    ("xelm", "8", ("AZ",), "TF-IDF / top-1", ""), ("xelm", "8", ("AZ",), "Ens. / m=8", "722.10"),
    ("xelm", "8", ("Avg.",), "Ens. / m=2", "12.29"), ("xelm", "8", ("HI",), "Ens. / m=2", "13.47"),
    ("xelm", "9", ("Zero-shot", "Typ. (TRG)"), "TH", ""), ("xelm", "9", ("Zero-shot", "Typ. (TRG)"), "TR", "44.2"),
    ("xelm", "9", ("Few-shot", "Typ. (EN)"), "TH", "44.5"), ("xelm", "9", ("Zero-shot", "XGLM (1.7B)"), "ZH", "46.9"),
    ("xelm", "10", ("Zero-shot", "Typ. (TRG)"), "HI", "52.7"), ("xelm", "10", ("Zero-shot", "Typ. (TRG)"), "EU", ""),
    ("xelm", "10", ("Few-shot", "Typ. (EN)"), "RU", "53.7"), ("xelm", "10", ("Zero-shot", "XGLM (1.7B)"), "TE", "57.0"),
    ("xelm", "11", ("Few-shot", "Typ. (TRG)"), "KO", "55.9"),
    ("xelm", "11", ("Zero-shot", "TF-IDF (Top-1)"), "ES", "55.0"),
    ("xelm", "11", ("Few-shot", "TF-IDF (Ens.)"), "DE", "53.8"),
]

TEXT_COLUMNS = {  # columns that hold words, not numbers: every other non-key cell must parse with numbers()
    ("clm", "3"): {"Enc", "Dec"}, ("clm", "4"): "all", ("clm", "8"): "all", ("clm", "10"): "all", ("clm", "11"): "all",
}
SOURCES = {"lmsfd": "lms-fd_condensing-multilingual-knowledge_v1.txt", "clm": "clm_token-level-cross-lingual-"
           "feature-mixing.txt", "lsl": "lsl_language-specific-transformer-layers.txt",
           "xelm": "xelm_cross-lingual-expert-language-models.txt"}


def _cell(paper: str, table: str, key: tuple[str, ...], column: str) -> str:
    df = load(paper, table)
    keys = list(df.attrs["meta"].keys)
    hit = df[(df[keys] == list(key)).all(axis=1)]
    assert len(hit) == 1, f"{paper} table {table}: {len(hit)} rows with key {key}"
    return hit.iloc[0][column]


def test_index_and_files_match_one_to_one() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in ROOT.glob("*/*.csv")}
    entries = [m.file for m in index()]
    assert len(entries) == len(set(entries))
    assert set(entries) == files


def test_every_expected_table_is_there() -> None:
    assert {(m.paper_id, m.number) for m in index()} == set(SHAPES)


@pytest.mark.parametrize("meta", index(), ids=lambda m: m.file)
def test_index_entry_is_complete(meta) -> None:
    assert meta.table == f"Table {meta.number}"
    assert meta.caption and meta.units and meta.paper.count(".") >= 2  # authors. title. venue
    assert meta.source.startswith(SOURCES[meta.paper_id])
    assert meta.paper_id != "lmsfd" or meta.source.endswith("(v1)")


@pytest.mark.parametrize(("paper", "table"), sorted(SHAPES))
def test_shape_matches_the_printed_table(paper: str, table: str) -> None:
    df = load(paper, table)
    assert df.shape == SHAPES[(paper, table)]
    assert all(isinstance(v, str) for v in df.to_numpy().ravel())


@pytest.mark.parametrize(("paper", "table"), sorted(SHAPES))
def test_at_least_three_spot_values(paper: str, table: str) -> None:
    assert sum(1 for s in SPOTS if s[:2] == (paper, table)) >= 3


@pytest.mark.parametrize(("paper", "table", "key", "column", "printed"), SPOTS,
                         ids=[f"{s[0]}{s[1]}-{'/'.join(s[2])}-{s[3]}" for s in SPOTS])
def test_spot_value_as_printed(paper: str, table: str, key: tuple[str, ...], column: str, printed: str) -> None:
    assert _cell(paper, table, key, column) == printed


@pytest.mark.parametrize(("paper", "table"), sorted(SHAPES))
def test_every_value_cell_parses(paper: str, table: str) -> None:
    df = load(paper, table)
    text = TEXT_COLUMNS.get((paper, table), set())
    cols = [c for c in df.columns[len(df.attrs["meta"].keys):] if text != "all" and c not in text]
    for c in cols:
        for v in df[c]:
            numbers(v)  # raises ValueError naming the cell


def test_lmsfd_averages_recompute() -> None:
    """LMS-FD Tables 7 and 8: 'avg.' is the plain mean of the language columns (to the printed rounding)."""
    for table, langs in (("7", 24), ("8", 6)):
        df = load("lmsfd", table)
        for _, row in df.iterrows():
            vals = [number(v) for v in row.iloc[1 : 1 + langs]]
            assert abs(sum(vals) / langs - number(row["avg."])) <= 0.005


def test_lsl_matrices_have_the_diagonal_and_six_daggers() -> None:
    langs = ["DE", "EN", "ES", "FR", "IT", "JA", "KO", "PT", "SW", "ZH"]
    for table in ("8", "9"):
        df = load("lsl", table)
        for _, row in df.iterrows():
            assert row[row["source"].removesuffix(" →")] == "−"
        daggers = {(r["panel"], r["source"], c) for _, r in df.iterrows() for c in langs if r[c].endswith("†")}
        assert len(daggers) == (12 if table == "8" else 0)  # 6 pairs, marked in both panels


def test_lsl_table11_delta_is_ours_minus_baseline() -> None:
    for _, row in load("lsl", "11").iterrows():
        assert math.isclose(number(row["Ours"]) - number(row["Sep. Decoder"]), number(row["∆"]), abs_tol=1e-9)


def test_clm_table4_agrees_with_tables_10_and_11_except_tr_decoder() -> None:
    t4 = load("clm", "4")
    full = {"enc": load("clm", "10").set_index("Code"), "dec": load("clm", "11").set_index("Code")}
    for lang in ("it", "ru", "hi", "tr"):
        for side in ("enc", "dec"):
            same = list(t4[f"{lang} / {side}"]) == full[side].loc[lang, "Similar Languages"].split()
            assert same != ((lang, side) == ("tr", "dec"))  # the paper's one inconsistency, noted in the index


def test_skipped_tables_are_listed() -> None:
    import yaml

    skipped = yaml.safe_load((ROOT / "index.yaml").read_text(encoding="utf-8"))["skipped"]
    assert any(s["paper"] == "xelm" and "Table 6" in s["what"] for s in skipped)
    assert all(s["why"] for s in skipped)


@pytest.mark.parametrize(("cell", "value"), [
    ("29.41", 29.41), ("+0.35", 0.35), ("-0.23", -0.23), ("−1.15", -1.15), ("+0.00", 0.0), ("76.96M", 76.96e6),
    ("1057M", 1.057e9), ("708K", 708e3), ("10.5 B", 10.5e9), ("96%", 96.0), ("80.0%", 80.0), ("1.8x", 1.8),
    ("59.0†", 59.0), ("50.1†", 50.1), ("3,324.45", 3324.45), ("20,000", 20000.0), ("0.45285", 0.45285),
    ("", None), ("-", None), ("–", None), ("−", None), (" 6.70 ", 6.70),
])
def test_number_parses_printed_cells(cell: str, value: float | None) -> None:
    got = number(cell)
    assert got == value if value is None else math.isclose(got, value, rel_tol=1e-12)


@pytest.mark.parametrize("cell", ["15.28 (7.23)", "195.2 ± 2.6", "✓", "CLSR*", "fy nl de", "1.2.3", "M", "+"])
def test_number_rejects_what_is_not_one_number(cell: str) -> None:
    with pytest.raises(ValueError, match="not a single printed number"):
        number(cell)


@pytest.mark.parametrize(("cell", "values"), [
    ("195.2 ± 2.6", [195.2, 2.6]), ("15.28 (7.23)", [15.28, 7.23]), ("243.14 (4.1%)", [243.14, 4.1]),
    ("15.23 (–)", [15.23, None]), ("5.41 (51.0)", [5.41, 51.0]), ("+1.17", [1.17]), ("", [None]),
])
def test_numbers_splits_compound_cells(cell: str, values: list[float | None]) -> None:
    assert numbers(cell) == values


def _fixture(tmp_path: Path, csv_text: str, keys: str = "[Model]") -> Path:
    (tmp_path / "clm").mkdir(parents=True)
    (tmp_path / "clm" / "table1.csv").write_text(csv_text, encoding="utf-8")
    (tmp_path / "index.yaml").write_text(
        "tables:\n- file: clm/table1.csv\n  paper: A. B. C.\n  table: Table 1\n  caption: c\n"
        f"  keys: {keys}\n  units: BLEU\n  source: s\n  notes: ''\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("csv_text", "keys", "message"), [
    ("Model,BLEU\na,1\nb,2,3\n", "[Model]", r"table1\.csv:3: 3 cells, the header has 2"),
    ("Model,BLEU\na,1\n\nb,2\n", "[Model]", r"table1\.csv:3: blank line"),
    ("Model,BLEU\na,1\na,2\n", "[Model]", r"table1\.csv:3: duplicate key \('a',\) \(first on line 2\)"),
    ("Model,BLEU,BLEU\na,1,2\n", "[Model]", r"table1\.csv:1: duplicate column names \['BLEU'\]"),
    ("Name,BLEU\na,1\n", "[Model]", r"table1\.csv:1: the first columns \['Name'\] are not the index keys"),
    ('Model,BLEU\n"a,1\n', "[Model]", r"table1\.csv:\d+: malformed CSV"),
    ("Model,BLEU\n", "[Model]", r"table1\.csv: no rows"),
])
def test_malformed_csv_names_file_and_line(tmp_path: Path, csv_text: str, keys: str, message: str) -> None:
    root = _fixture(tmp_path, csv_text, keys)
    with pytest.raises(DataError, match=message):
        _load("clm", 1, root=root)


def test_a_good_fixture_loads_as_strings(tmp_path: Path) -> None:
    df = _load("clm", "1", root=_fixture(tmp_path, "Model,BLEU,WR\na,+1.5,\nb,2.0,–\n"))
    assert df.to_dict("list") == {"Model": ["a", "b"], "BLEU": ["+1.5", "2.0"], "WR": ["", "–"]}


def test_malformed_index_names_the_entry(tmp_path: Path) -> None:
    root = _fixture(tmp_path, "Model,BLEU\na,1\n")
    (root / "index.yaml").write_text("tables:\n- file: clm/table1.csv\n  paper: p\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"index\.yaml: tables\[0\] \(clm/table1\.csv\): unknown fields \[\], missing"):
        index(root)
    with pytest.raises(DataError, match="no entry for clm/table2.csv"):
        _load("clm", 2, root=_fixture(tmp_path / "x", "Model,BLEU\na,1\n"))
