"""Ours only: the small-scale claim (``claim`` stage, ``lsnmt/claim/``), one table and one figure per experiment
that measured it (``results/<exp>/claim/summary.json`` with status ``measured``; the others have no item).

``tables/ours/claim-<exp>.{md,csv}``: method, parameters (total and shared), BLEU and exact match with their 95%
bootstrap intervals, the differences to naive with interval, p and verdict, and the orderings;
``figures/ours/claim-<exp>.{png,pdf}``: the same scores as bars (``lsnmt.claim.figure``). No paper counterpart.
"""

from __future__ import annotations

import json
from pathlib import Path

from lsnmt.claim import figure, table
from lsnmt.report.item import Item
from lsnmt.report.runs import Results
from lsnmt.report.specs.extra import _write


def claim_tables(results: Results, out: Path) -> list[Item]:
    items = []
    for name in results.params.experiments:
        path = results.results_dir / name / "claim" / "summary.json"
        if not path.is_file():
            continue
        summary = json.loads(path.read_text(encoding="utf-8"))
        if summary.get("status") != "measured":
            continue
        stem = f"claim-{name}"
        pngs = figure.draw(summary, out / "figures" / "ours", stem)
        md = table.markdown(summary, f"../../figures/ours/{pngs[0].name}")
        links = _write(out, stem, md, table.rows(summary), table.HEADER)
        items.append(Item("ours", f"Small-scale claim: {name}", "ours",
                          (*links, *(f"figures/ours/{p.name}" for p in pngs)), table.caption(summary)))
    return items
