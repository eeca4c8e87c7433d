"""Significance counts the papers print, ours beside theirs (the ``ours/significance`` table).

LSL (Sec. 4: paired bootstrap on chrF, every direction, p < 0.05) says for each comparison it discusses on how
many of its 90 directions the difference is significant; those counts are in the text and captions, not in a
table column, so :data:`PRINTED` lists each with its source. Ours come from the evaluate stage's ``summary.json``
of the same experiment: against ``evaluate.baseline`` (``significance``) or another reference (``comparisons``,
configured by ``evaluate.comparisons``). LMS-FD and CLM print no significance tests.

Shown beside each other, not compared: a count depends on the test set's size and the models' scale, so no
tolerance makes ours "reproduce" the paper's. A run that did not evaluate both systems reads "not run", with why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsnmt.report.item import Item
from lsnmt.report.render import md_table
from lsnmt.report.runs import Results
from lsnmt.report.specs.extra import _write


@dataclass(frozen=True)
class Printed:
    """One significance count a paper prints: ``method`` against ``reference`` in ``experiment``."""

    paper: str
    experiment: str
    method: str
    reference: str
    count: str
    source: str
    metric: str = "chrf"
    note: str = ""
    """Why ours cannot be computed, where the experiment defines no such system."""


PRINTED: tuple[Printed, ...] = (
    Printed("lsl", "flores10_lsl", "lsl_nas_dense", "naive", "84 of 90", "Sec. 4.2; Tables 2, 8, 11 captions"),
    Printed("lsl", "flores10_lsl", "lsl_nas", "adapters_enc_srctgt_256", "38 of 90", "Sec. 4.2"),
    Printed("lsl", "flores10_lsl", "lsl_nas_dense", "adapters_enc_srctgt_256", "62 of 90",
            "Sec. 4.2; Table 2 caption"),
    Printed("lsl", "flores10_lsl", "lsl_nas", "lsl_s34_t14_16", "15 of 90", "Sec. 4.3, Table 3"),
    Printed("lsl", "flores10_lsl", "lsl_nas", "lsl_s23_t13_15", "15 of 90", "Sec. 4.3, Table 3"),
    Printed("lsl", "flores10_lsl", "lsl_nas", "lsl_s12_t13_15", "fewer than 30 of 90", "Sec. 4.3, Table 3"),
    Printed("lsl", "flores10_lsl", "lsl_nas", "lsl_s12_t14_16", "fewer than 30 of 90", "Sec. 4.3, Table 3"),
    Printed("lsl", "flores10_lsl", "lsl_nas", "ls_ffn", "35 of 90", "Sec. 4.3, Table 4"),
    Printed("lsl", "flores10_lsl", "lsl_nas", "ls_attention", "49 of 90", "Sec. 4.3, Table 4"),
    Printed("lsl", "flores10_lsl", "lsl_nas_sd_dense", "sd_baseline", "86 of 90", "Sec. 4.4, Table 5"),
    Printed("lsl", "flores10_lsl", "lsl_nas_sd_dense", "sd_adapters_512", "76 of 90", "Sec. 4.4, Table 5",
            note="not configured: flores10_lsl trains no shared-decoder adapters (Table 5's adapter rows are "
                 "counted, not trained; flores10_lsl_zeroshot's sd_adapters_512 is trained on other directions)"),
)


def outcomes(summary: dict[str, Any], method: str, reference: str, metric: str) -> dict[str, int] | str:
    """Our outcome counts of ``method`` against ``reference``, or why there are none."""
    if reference == summary.get("baseline"):
        got = summary.get("significance", {}).get(method, {}).get(metric)
        return got["outcomes"] if got else f"{method} not evaluated against the baseline"
    comp = (summary.get("comparisons") or {}).get(f"{method} vs {reference}")
    if comp is None:
        return "not in evaluate.comparisons"
    if "not_run" in comp:
        return str(comp["not_run"])
    got = comp["tests"].get(metric)
    return got["outcomes"] if got else f"no {metric} score"


def ours_cell(results: Results, p: Printed) -> tuple[str, bool]:
    """The printed cell of ours and whether it holds a count."""
    if p.note:
        return p.note, False
    run = results.run(p.experiment)
    if run is None or run.summary is None:
        return "not run", False
    got = outcomes(run.summary, p.method, p.reference, p.metric)
    if isinstance(got, str):
        return f"not run ({got})", False
    total = sum(got.values())
    significant = got["better"] + got["worse"]
    untested = f", {got['degenerate']} untested (degenerate)" if got["degenerate"] else ""
    return f"{significant} of {total} ({got['better']} better, {got['worse']} worse{untested})", True


def significance_table(results: Results, out: Path) -> list[Item]:
    """``tables/ours/significance.{md,csv}``: every count of :data:`PRINTED`, ours beside the paper's."""
    header = ["paper", "experiment", "comparison", "metric", "paper: significant", "source", "ours: significant"]
    rows, any_run = [], False
    for p in PRINTED:
        cell, ok = ours_cell(results, p)
        any_run |= ok
        rows.append([p.paper, p.experiment, f"{p.method} vs {p.reference}", p.metric, p.count, p.source, cell])
    status = "ours" if any_run else "not run"
    cap = "Directions on which a paper's comparisons are significant (paired bootstrap), ours beside theirs"
    md = "\n".join([f"# {cap}", "", "The papers' counts are in their text and captions; ours are the evaluate "
                    "stage's paired bootstraps (`summary.json`: `significance` against the baseline, `comparisons` "
                    "for `evaluate.comparisons`) on the same metric, p < `evaluate.significance`. Shown, not "
                    "compared: a count depends on the test set and the scale of the models.", "",
                    md_table(header, rows), ""])
    return [Item("ours", "Significance counts (LSL)", status, _write(out, "significance", md, rows, header), cap)]
