"""The papers' #params columns are counted from params.yaml (reports/paper/counts.yaml, lsnmt.report.paper_counts).

Every row of reports/params.csv links a printed #params cell to a params.yaml experiment and method; the counts
themselves are checked against the papers in tests/models/test_param_count.py. Here: the links resolve, the
committed params.csv has exactly their rows and printed figures, the configurations counted but never trained
plan no job, bad links fail naming the key, and CLM's en-xx / xx-en experiments are the paper's two models.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from lsnmt.experiment.params import Params
from lsnmt.io import DataError
from lsnmt.report.paper_counts import COLUMNS, COUNTS, load, load_file
from lsnmt.typed import ConfigError

ROOT = Path(__file__).resolve().parent.parent
PARAMS = Params.load(ROOT / "params.yaml")


def test_params_csv_has_the_linked_rows_and_the_printed_figures() -> None:
    """reports/params.csv (committed) is the links' table: same rows in the same order, the papers' figures as
    the CSVs of reports/paper print them (a stale params.csv, or a link to the wrong printed row, fails here)."""
    rows = load(PARAMS)
    with open(ROOT / "reports" / "params.csv", encoding="utf-8") as fh:
        committed = list(csv.DictReader(fh))
    assert tuple(committed[0]) == COLUMNS
    ours = [(r.paper, r.table, r.experiment, r.method, str(r.paper_train_params), str(r.paper_inference_params),
             r.note) for r in rows]
    theirs = [(c["paper"], c["table"], c["experiment"], c["method"], c["paper_train_params"],
               c["paper_inference_params"], c["note"]) for c in committed]
    assert ours == theirs
    assert len({r[:4] for r in ours}) == len(ours), "one row per (paper, table, experiment, method)"


def test_configurations_counted_but_never_trained_plan_no_job() -> None:
    """The few configurations the papers count but never train are method_cfg entries outside the experiment's
    `methods` (what Snakemake and DVC expand train@<method> over): they train nothing and plan nothing."""
    counted = set()
    for group in load_file().groups:
        for link in group.rows:
            exp = link.experiment or group.experiment
            if group.task is None:
                counted |= {(exp, m) for m in (link.method, link.implied) if m is not None}
    untrained = {(e, m) for e, m in counted if m not in PARAMS.methods_of(e)}
    assert untrained == {("opus100_clm_enxx", "adapter_lean"), ("wmt14_enxx", "adapter_lean"),
                         ("flores10_lsl", "adapters_enc_128_d640"), ("flores10_lsl", "adapters_enc_256_d640"),
                         ("flores10_lsl_zeroshot", "sd_adapters_128"), ("flores10_lsl_zeroshot", "sd_adapters_256"),
                         ("flores10_lsl_zeroshot", "sd_adapters_640")}
    for exp, method in untrained:
        assert method in PARAMS.get(exp).method_cfg
        assert method not in PARAMS.methods, "the top-level list (DVC's matrix) trains it"


def _links(tmp_path: Path, edit) -> Path:
    raw = yaml.safe_load(COUNTS.read_text(encoding="utf-8"))
    edit(raw)
    path = tmp_path / "counts.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize(("edit", "error", "match"), [
    (lambda r: r["groups"][0]["rows"][0].update(method="nope"), ConfigError,
     r"counts\.yaml: groups\[0\]\.rows\[0\]: method 'nope' is not defined under experiments\.iwslt14\.method_cfg"),
    (lambda r: r["groups"][0].update(experiment="nope"), ConfigError,
     r"groups\[0\]\.rows\[0\]: experiment 'nope' is not defined"),
    (lambda r: r["groups"][0]["rows"][0].update(row="Nope MMT"), DataError,
     r"groups\[0\]\.rows\[0\]: row \['Nope MMT'\] matches 0 rows of lmsfd/table1\.csv"),
    (lambda r: r["groups"][0].update(note=["nope"]), ConfigError,
     r"groups\[0\]\.rows\[0\]: note 'nope' is not defined"),
    (lambda r: r["groups"][0]["rows"][0].update(rnak=1), ConfigError, r"groups\[0\]\.rows\[0\]\.rnak: unknown key"),
    (lambda r: r["groups"][0].update(vocab="bpe"), ConfigError, r"groups\[0\]\.vocab: 'bpe' matches none of"),
])
def test_bad_links_name_the_file_and_key(tmp_path: Path, edit, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        load(PARAMS, _links(tmp_path, edit))


def test_clm_experiments_are_the_papers_en_xx_and_xx_en_models() -> None:
    """Every CLM English-centric experiment is a one-to-many model with the target-language tag and a many-to-one
    model with the source-language tag (App. B), training the same methods; the xx-en sCLM / mCLM of Tables 1-2
    put CLM in the encoder only with the captions' k (280/560, 35/70; mCLM 134/268: reports/paper/counts.yaml)."""
    from lsnmt.methods import resolve

    want_k = {"opus100_clm": {"sclm": (280, 560), "mclm": (134, 268)}, "wmt14": {"sclm": (35, 70), "mclm": (35, 70)}}
    for base, ks in want_k.items():
        enxx, xxen = PARAMS.get(f"{base}_enxx"), PARAMS.get(f"{base}_xxen")
        assert {f"{base}_enxx", f"{base}_xxen"} <= set(PARAMS.papers["clm"])
        assert (enxx.data.train_directions, enxx.data.eval_directions, enxx.data.tags) == ("en-xx", "en-xx",
                                                                                           "target-prefix")
        assert (xxen.data.train_directions, xxen.data.eval_directions, xxen.data.tags) == ("xx-en", "xx-en",
                                                                                           "source-prefix")
        assert all(s == "en" for s, _ in enxx.data.train_pairs) and all(t == "en" for _, t in xxen.data.train_pairs)
        assert PARAMS.methods_of(f"{base}_enxx") == PARAMS.methods_of(f"{base}_xxen")
        for method, (k_enxx, k_xxen) in ks.items():
            a, b = resolve(enxx.method_cfg, method)[1], resolve(xxen.method_cfg, method)[1]
            assert (a.features, a.decoder != "none") == (k_enxx, True)
            assert (b.features, b.encoder != "none", b.decoder) == (k_xxen, True, "none")


def test_every_printed_lmsfd_params_cell_is_counted() -> None:
    """Each LMS-FD row that prints a #params figure has its counted row in params.csv (Table 2's Naive MMT, 48M,
    is the IWSLT'14 naive model of Table 1, printed again: the report's Table 2 reads its own table's rows)."""

    from lsnmt.report import paper as paper_tables

    counts = yaml.safe_load((ROOT / "reports" / "paper" / "counts.yaml").read_text(encoding="utf-8"))
    with open(ROOT / "reports" / "params.csv", encoding="utf-8") as fh:
        counted = {(r["table"], r["method"]) for r in csv.DictReader(fh) if r["paper"].startswith("LMS-FD")}
    for key, columns in counts["columns"].items():
        paper, table = key.split("/")
        if paper != "lmsfd":
            continue
        number = table.removeprefix("table")
        frame = paper_tables.load(paper, number)
        rows = {str(r["row"]): r for g in counts["groups"] if g["paper"] == paper and str(g["table"]) == number
                for r in g["rows"]}
        for _, printed in frame.iterrows():
            if any(str(printed[c]).strip() not in ("", "-", "–") for c in columns if c in frame.columns):
                name = str(printed[frame.columns[0]])
                assert name in rows, f"{key}: {name!r} prints #params but counts.yaml has no row for it"
                assert (number, rows[name]["label"]) in counted, f"{key}: {name!r} is not in reports/params.csv"
