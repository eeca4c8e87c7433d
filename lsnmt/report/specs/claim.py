"""Ours only: the small-scale claim (``claim`` stage, ``lsnmt/claim/``), one table and one figure per experiment
that measured it (``results/<exp>/claim/summary.json`` with status ``measured``; the others have no item).

``tables/ours/claim-<exp>.{md,csv}``: each claim with its source, the systems compared and their parameter counts,
the differences with their seed-aware 95% intervals, p, seeds and verdict (the CSV: this table; verdicts in the
report's words, :data:`lsnmt.report.claim_answer.VERDICTS`); the markdown also
lists every system (method, parameters, scores, difference to naive), written alone to
``tables/ours/claim-<exp>-systems.csv``; ``figures/ours/claim-<exp>.{png,pdf}``: the scores as bars
(``lsnmt.claim.figure``). No paper counterpart.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lsnmt.claim import figure, markdown
from lsnmt.io import atomic_write
from lsnmt.report.claim_answer import word
from lsnmt.report.item import Item
from lsnmt.report.runs import Results
from lsnmt.report.specs.extra import _write


def _csv(path: Path, rows: list[list[str]], header: list[str]) -> str:
    with atomic_write(path) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return f"tables/ours/{path.name}"


def label(name: str) -> str:
    """The item's label for experiment ``name`` (its section id on the page: :attr:`Item.id`)."""
    return f"Small-scale claims: {name}"


def table_link(name: str) -> str:
    """The claim table's Markdown file, relative to ``reports/`` (the first screen links it)."""
    return f"tables/ours/claim-{name}.md"


def claim_tables(results: Results, out: Path) -> list[Item]:
    items = []
    for name in results.params.experiments:
        path = results.results_dir / name / "claim" / "summary.json"
        if not path.is_file():
            continue
        summary = json.loads(path.read_text(encoding="utf-8"))
        if summary.get("status") != "measured":
            continue
        summary = {**summary, "claims": [{**v, "status": word(v["status"])} for v in summary["claims"]]}
        stem = f"claim-{name}"
        pngs = figure.draw(summary, out / "figures" / "ours", stem)
        md = markdown.markdown(summary, f"../../figures/ours/{pngs[0].name}")
        links = _write(out, stem, md, markdown.claim_rows(summary), markdown.CLAIM_HEADER)
        systems = _csv(out / "tables" / "ours" / f"{stem}-systems.csv", markdown.system_rows(summary),
                       markdown.SYSTEM_HEADER)
        items.append(Item("ours", label(name), "ours",
                          (*links, systems, *(f"figures/ours/{p.name}" for p in pngs)), markdown.caption(summary)))
    return items
