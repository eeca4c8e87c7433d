"""Tables of our own beside the papers': parameter counts of every paper configuration, data statistics.

* ``ours/params``: ``reports/params.csv`` (the ``params`` stage counts the papers' models on the meta device),
  grouped by paper and table, with the relative difference; reproduced when every row is within 2%.
* ``ours/data-<exp>``: training pairs per direction (kept / input after the ``prepare`` filters) and the
  evaluation sets of every experiment whose data was prepared here (CLM Table 7 and LSL Table 7 are the
  papers' counterparts; their numbers are in ``reports/paper``).
* ``ours/test-sets-<exp>``: every system's en-xx / xx-en / all averages on each test set of an experiment that
  has more than one (``summary.json``'s top level and ``test_sets``): the primary one (FLORES-200 devtest in
  ``default``, out-of-domain) beside the held-out in-domain one (``test.tatoeba``, disjoint from training).
"""

from __future__ import annotations

import json
from pathlib import Path

from lsnmt.io import atomic_write
from lsnmt.report.cells import DEGENERATE
from lsnmt.report.item import Item
from lsnmt.report.render import md_table
from lsnmt.report.runs import Results

PARAMS_TOL = 0.02


def _write(out: Path, stem: str, md: str, rows: list[list[str]], header: list[str]) -> tuple[str, ...]:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    for ext, text in (("md", md), ("csv", buf.getvalue())):
        with atomic_write(out / "tables" / "ours" / f"{stem}.{ext}") as f:
            f.write(text)
    return tuple(f"tables/ours/{stem}.{e}" for e in ("md", "csv"))


def params_table(results: Results, out: Path) -> list[Item]:
    header = ["paper", "table", "experiment", "method", "train (ours)", "train (paper)", "Δ train",
              "inference (ours)", "inference (paper)", "Δ inference"]
    rows, ok = [], []
    for r in results.param_rows:
        line = [r["paper"], r["table"], r["experiment"], r["method"]]
        for which in ("train", "inference"):
            ours, theirs = float(r[f"{which}_params"]), r[f"paper_{which}_params"]
            if theirs:
                rel = (ours - float(theirs)) / float(theirs)
                ok.append(abs(rel) <= PARAMS_TOL)
                line += [f"{ours / 1e6:.2f}M", f"{float(theirs) / 1e6:.2f}M", f"{100 * rel:+.2f}%"]
            else:
                line += [f"{ours / 1e6:.2f}M", "", ""]
        rows.append(line)
    status = "not run" if not ok else ("reproduced" if all(ok) else "differs")
    md = "\n".join([
        "# Parameter counts of the papers' models, ours beside theirs", "",
        f"Status: **{status}** ({sum(ok)} of {len(ok)} counts within 2%). Our counts build each paper "
        "configuration on PyTorch's meta device (`python -m stages.params`); the reasoning behind every row "
        "is in `reports/params.csv` (column `note`).", "", md_table(header, rows), ""])
    links = _write(out, "params", md, rows, header)
    return [Item("ours", "Parameter counts (all papers)", status, links,
                 "Training and inference parameters of every counted paper configuration, ours vs. theirs")]


def data_tables(results: Results, out: Path, data_dir: Path = Path("data")) -> list[Item]:
    items = []
    for name in results.params.experiments:
        path = data_dir / name / "prepared" / "report.json"
        if not path.is_file():
            continue
        rep = json.loads(path.read_text(encoding="utf-8"))
        header = ["direction", "corpus", "input", "kept", "valid", "test"]
        rows = []
        for d in sorted(set(rep.get("train", {})) | set(rep.get("test", {}))):
            for corpus, c in sorted(rep.get("train", {}).get(d, {}).items()) or [("", {})]:
                rows.append([d, corpus, str(c.get("input", "")), str(c.get("kept", "")),
                             str(rep.get("valid", {}).get(d, {}).get("lines", "")),
                             str(rep.get("test", {}).get(d, {}).get("lines", ""))])
        cap = f"Sentence pairs per direction of experiment `{name}` after the prepare filters (ours)"
        md = "\n".join([f"# {cap}", "", results.describe(name) + ".", "", md_table(header, rows), ""])
        items.append(Item("ours", f"Data statistics: {name}", "ours", _write(out, f"data-{name}", md, rows,
                                                                                    header), cap))
    return items


TEST_SET_AVERAGES = ("en-xx", "xx-en", "all")


def _average(summary: dict, method: str, metric: str, key: str) -> str:
    """One average of one test set's summary, ``‡`` after a degenerate system's; ``–`` where there is none."""
    value = summary["scores"].get(method, {}).get(metric, {}).get("averages", {}).get(key)
    if value is None:
        return "–"
    return f"{value:.2f}" + (DEGENERATE if method in summary.get("degenerate", {}).get("systems", {}) else "")


def heldout_table(results: Results, out: Path) -> list[Item]:
    """Per experiment with a held-out test set: every system's averages on each test set, side by side."""
    items = []
    for name, run in results.runs.items():
        summary = run.summary
        if not summary or not summary.get("test_sets"):
            continue
        sets = {summary.get("test_set", "test"): summary, **summary["test_sets"]}
        header = ["method", "metric", *(f"{t} {k}" for t in sets for k in TEST_SET_AVERAGES)]
        rows = [[m, metric, *(_average(s, m, metric, k) for s in sets.values() for k in TEST_SET_AVERAGES)]
                for m in summary["methods"] for metric in summary["metrics"]]
        cap = f"Every system on each test set of experiment `{name}`: {', '.join(f'`{t}`' for t in sets)} (ours only)"
        legend = [f"- `{t}`: {s['label']}; `all` over its {len(s['direction_sets']['all'])} directions"
                  for t, s in sets.items()]
        md = "\n".join([f"# {cap}", "", results.describe(name) + ". Averages of the per-direction scores "
                        f"(`results/{name}/evaluate/summary.json`, `test_sets`); {DEGENERATE}: degenerate output "
                        "on that test set (`lsnmt/eval/degenerate.py`).", "", *legend, "", md_table(header, rows), ""])
        items.append(Item("ours", f"Test sets: {name}", "ours", _write(out, f"test-sets-{name}", md, rows, header),
                          cap))
    return items
