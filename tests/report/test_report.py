"""The report stage: every table and figure builds from fixture results, ours beside the paper's."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from lsnmt.experiment.params import Params
from lsnmt.report import paper as paper_tables
from lsnmt.report.build import report
from lsnmt.report.cells import Avg, Both, Row
from lsnmt.report.cells import Params as ParamsSel
from lsnmt.report.paper_table import Binding, build
from lsnmt.report.runs import Results

ROOT = Path(__file__).resolve().parents[2]


def _scores(avg: float, langs: list[str]) -> dict:
    return {"averages": {"all": avg, "en-xx": avg - 1, "xx-en": avg + 1, "zero-shot": avg / 2},
            "both_directions": {lang: avg for lang in langs},
            "groups": {"en-xx": {"low": avg - 1}, "xx-en": {"low": avg + 1}}}


def write_summary(results: Path, exp: str, methods: dict[str, float], metric: str = "bleu") -> None:
    langs = ["de", "fr", "he"]
    summary = {"experiment": exp, "methods": list(methods), "metrics": [metric],
               "scores": {m: {metric: _scores(v, langs), "chrf": _scores(v * 2, langs)} for m, v in methods.items()},
               "win_ratio": {m: {metric: {"all": 50.0, "en-xx": 50.0, "xx-en": 50.0}} for m in methods},
               "cost": {m: {"train_params": 1_000_000 * (i + 1), "inference_params_max": 1_000_000 * (i + 1)}
                        for i, m in enumerate(methods)},
               "figures": [], "atp": {}, "similarity": {}}
    out = results / exp / "evaluate"
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


@pytest.fixture()
def results(tmp_path: Path, params: Params) -> Results:
    write_summary(tmp_path / "results", "default", {"naive": 10.0, "lms": 12.5, "switch": 11.0, "sclm": 9.0})
    return Results(params, tmp_path / "results", ROOT / "reports" / "params.csv")


def test_every_paper_table_and_figure_is_written(tmp_path: Path, results: Results) -> None:
    out = tmp_path / "reports"
    items = report(results, out)
    metas = paper_tables.index()
    for m in metas:
        stem = Path(m.file).stem
        for ext in ("md", "tex", "csv"):
            path = out / "tables" / m.paper_id / f"{stem}.{ext}"
            assert path.is_file() and path.stat().st_size > 0, path
    index = (out / "README.md").read_text(encoding="utf-8")
    assert all(it.links[0] in index for it in items if it.links)
    page = (out / "index.html").read_text(encoding="utf-8")  # the same items on one page, every file linked
    assert "[index.html](index.html)" in index and all(f'href="{link}"' in page for it in items for link in it.links)
    assert {"lmsfd", "clm", "lsl", "xelm"} <= {it.paper for it in items}
    for it in items:
        for link in it.links:
            assert (out / link).is_file(), link
        assert it.status in {"reproduced", "differs", "params differ", "not run", "ours"}


def test_missing_results_read_not_run_and_default_cells_are_filled(tmp_path: Path, results: Results) -> None:
    out = tmp_path / "reports"
    report(results, out)
    rows = list(csv.DictReader((out / "tables" / "lmsfd" / "table2.csv").open(encoding="utf-8")))
    avg = {r["Methods"]: r for r in rows if r["column"] == "avg."}
    # no iwslt14 run here: every score of ours is "not run", never a number
    assert all(r["ours"] == "not run" for r in avg.values())
    # the default run fills its own cells: naive absolute, LMS as a gain over naive (12.5 - 10.0)
    assert float(avg["Naive MMT"]["default"]) == pytest.approx(10.0)
    assert float(avg["LMS"]["default"]) == pytest.approx(2.5)
    md = (out / "tables" / "lmsfd" / "table2.md").read_text(encoding="utf-8")
    assert "NOT comparable" in md and "iwslt14" in md and "150,000 updates" in md


def test_paper_scale_cells_and_status(tmp_path: Path, params: Params) -> None:
    write_summary(tmp_path, "iwslt14", {"naive": 30.35, "lms": 31.45}, metric="spbleu-flores200")
    res = Results(params, tmp_path, tmp_path / "no-params.csv")
    meta = paper_tables.meta("lmsfd", 2)
    frame = paper_tables.load("lmsfd", 2)
    close = Binding("lmsfd", "table2", "iwslt14", gains=True, columns={"avg.": Avg(subset="all")},
                    rows={"Naive MMT": "naive", "LMS": "lms"})
    built = build(meta, frame, close, res)
    got = {c.keys[0]: c for c in built.cells if c.column == "avg." and c.method}
    assert got["LMS"].ours == pytest.approx(1.10) and got["LMS"].delta == pytest.approx(0.05)
    assert built.status == "reproduced"
    far = Binding("lmsfd", "table2", "iwslt14", gains=True, columns={"avg.": Avg(subset="all"), "de": Both(lang="de")},
                  rows={"Naive MMT": "naive", "LMS": "lms"}, score_tol=0.01)
    assert build(meta, frame, far, res).status == "differs"


def test_parameter_columns_come_from_the_counted_configurations(params: Params, tmp_path: Path) -> None:
    res = Results(params, tmp_path, ROOT / "reports" / "params.csv")
    got = ParamsSel(which="train", paper="LMS-FD (Xu et al. 2023)", table="1").value(res, res.run("iwslt14"),
                                                                                   Row("naive"))
    assert got is not None and abs(got - 48e6) / 48e6 < 0.02


def test_figures_are_deterministic(tmp_path: Path, results: Results) -> None:
    digests = []
    for i in range(2):
        out = tmp_path / f"r{i}"
        report(results, out)
        pngs = sorted((out / "figures").rglob("*.png")) + sorted((out / "figures").rglob("*.pdf"))
        assert pngs and all(p.stat().st_size > 1000 for p in pngs)
        digests.append({p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in pngs})
    assert digests[0] == digests[1]


def test_data_statistics_come_from_our_prepared_data(tmp_path: Path, params: Params) -> None:
    prepared = tmp_path / "data" / "iwslt17_zeroshot" / "prepared"
    prepared.mkdir(parents=True)
    report_json = {"train": {"en-it": {"iwslt17": {"input": 240000, "kept": 231600}}},
                   "valid": {"en-it": {"lines": 929}}, "test": {"it-en": {"lines": 1500}}}
    (prepared / "report.json").write_text(json.dumps(report_json), encoding="utf-8")
    res = Results(params, tmp_path / "results", tmp_path / "none.csv", tmp_path / "data")
    from lsnmt.report.specs import BINDINGS

    built = build(paper_tables.meta("clm", 7), paper_tables.load("clm", 7), BINDINGS[("clm", "table7")], res)
    got = {(c.keys[0], c.column): c for c in built.cells}
    assert got[("En-It", "train")].ours == 231600 and got[("En-It", "valid")].ours == 929
    assert got[("En-It", "test")].ours == 1500  # either orientation of the pair
    assert got[("En-Nl", "train")].ours is None  # not in our data: not run
    assert built.status == "differs"  # 1500 test lines vs the printed 1566


def test_lmsfd_share_and_ls_rows_are_the_two_routes_of_one_trained_model(params: Params) -> None:
    """Tables 1-3 bind every row to a system of the experiment's methods (``lsnmt.methods.systems``); a Share row
    reads FD / LMS+FD through the shared route, its LS row the same trained method through the LS route."""
    from lsnmt.methods import resolve_system, systems
    from lsnmt.report.specs.lmsfd import BINDINGS

    for binding in BINDINGS.values():
        exp = params.get(binding.experiment)
        by_name = {s.name: s for m in params.methods_of(exp.name) for s in systems(exp.method_cfg, m)}
        for label, bound in binding.rows.items():
            system = by_name[bound if isinstance(bound, str) else bound.method]
            if "FD" in label:
                route = resolve_system(exp.method_cfg, system)[1].route
                assert route == ("ls" if "LS" in label else "share"), (binding.table, label)
                share = system.name.removesuffix("_ls")
                assert system.method == share and by_name[share].route is None, (binding.table, label)


def test_clm_table9_scclm_row_reads_the_k194_model(tmp_path: Path, params: Params) -> None:
    """CLM Table 9's sCLM row is the k=194 model on both sides (its caption), not Table 1's sCLM♢ (k=280 en-xx,
    k=560 xx-en): BLEU from ``sclm_k194`` in both runs, not from ``sclm``."""
    from lsnmt.report.specs import BINDINGS

    for exp, shift in (("opus100_clm_enxx", 0.0), ("opus100_clm_xxen", 5.0)):
        write_summary(tmp_path, exp, {"naive": 20.0 + shift, "sclm": 29.0 + shift, "sclm_k194": 23.0 + shift})
    res = Results(params, tmp_path, tmp_path / "no-params.csv")
    built = build(paper_tables.meta("clm", 9), paper_tables.load("clm", 9), BINDINGS[("clm", "table9")], res)
    got = {c.column: c.ours for c in built.cells if c.keys[0] == "sCLM" and c.method}
    assert got["en-xx / All"] == pytest.approx(23.0 - 1 - (20.0 - 1))  # a gain over naive, en-xx average
    assert got["xx-en / All"] == pytest.approx(28.0 + 1 - (25.0 + 1))  # the xx-en run's sclm_k194
