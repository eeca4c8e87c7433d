"""Tables of our own beside the papers': parameter counts of every paper configuration, data statistics.

* ``ours/params``: ``reports/params.csv`` (the ``params`` stage counts the papers' models on the meta device),
  grouped by paper and table, with the relative difference; reproduced when every row is within 2%.
* ``ours/data-<exp>``: training pairs per direction (kept / input after the ``prepare`` filters) and the
  evaluation sets of every experiment whose data was prepared here (CLM Table 7 and LSL Table 7 are the
  papers' counterparts; their numbers are in ``reports/paper``).
"""

from __future__ import annotations

import json
from pathlib import Path

from lsnmt.io import atomic_write
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
