"""The numbers DVC shows: one small file per system, the evaluation stages' metrics.

The evaluation stages write their detailed results (every direction, language, seed, signature) as plain outputs.
Beside them each writes ``results/{exp}/metrics/<stage>/``, the folder DVC declares as its metrics, one flat JSON
file per system (and test set, task or setting): a bare ``dvc metrics show`` prints each file as a row and each key
as a column, so systems are rows and metrics columns, within 200 characters on the default
(``tests/test_metrics.py``); ``dvc metrics diff`` prints one row per file and key that moved. (``dvc exp show``
names a key that several files share by its file, ``results/default/metrics/evaluate/test/naive.json:bleu``:
docs/reports.md.)

Every value is copied from the stage's own summary, rounded as the papers print it (``DIGITS``); a number the
summary withholds (a win ratio between degenerate outputs, ``lsnmt/eval/degenerate.py``) is left out, never filled
in. A stage with no numbers writes one file saying why (``status``: lm_icl without its datasets, the claim without
a ``claim`` section), so that no row is empty and no folder either.

* ``evaluate`` (``mt_rows``): ``{test set}/{system}.json``, the primary test set (``test``, FLORES-200 on the
  default) and each held-out one (``test.tatoeba``). The first metric (``evaluate.metrics[0]``, e.g. ``bleu``)
  averaged over all directions (LSL Tables 1-3, the average columns of LMS-FD Tables 1-3 and CLM Tables 1-2) and
  its unweighted ``en-xx`` and ``xx-en`` averages (``lsnmt/eval/aggregate.py``); every other metric (spBLEU, chrF,
  COMET) as its average over all directions; ``wr``, the first metric's win ratio (%) against
  ``evaluate.baseline`` (LMS-FD Sec. 4, CLM Sec. 4.3); ``offtarget``, the pooled off-target rate (%) on the
  summary's scope (zero-shot directions, CLM Table 6; else en-xx); ``params`` and ``params_eff``, training
  parameters and the parameters one direction uses at inference (the largest over directions; LSL's |θ| and
  |θ_eff|).
* ``task_eval`` (``task_rows``): ``{task}/{system}.json`` (LMS+FD's other route as ``<method>_<route>``, as in
  MT): ``f1`` (NER span F1, QA F1) and, for QA, ``em``, averages over languages of the seed means; ``wr`` on F1
  against naive (LMS-FD Tables 4-5); ``params``, ``params_eff``.
* ``lm_eval`` (``xelm_ppl_rows``): ``{model}.json``, ``ppl`` averaged over the pretraining languages for seed,
  dense, TF-IDF top-1 / ensemble and typology experts (x-elm Table 1).
* ``lm_icl`` (``xelm_icl_rows``): ``{task@shots}/{setting}.json``, ``acc`` (%) averaged over languages (x-elm
  Table 3).
* ``claim`` (``claim_rows``): ``{system}-vs-{baseline}.json`` per claim measured (``lsnmt/claim/claims.py``):
  ``delta``, the BLEU difference on the claim's synthetic task, its ``p`` and ``shown``, the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsnmt.io import atomic_dir, write_json

DIGITS = 2
"""Scores, rates and perplexities as the papers print them: two decimals."""
SETS = ("en-xx", "xx-en")
"""Direction averages kept for the first metric besides the one over all directions (the papers' headline
columns), as keys of their own; the summary has every set."""
P_DIGITS = 3
"""p-values: three decimals (a bootstrap of 1,000 samples resolves 0.001)."""

Rows = dict[str, dict[str, Any]]
"""Relative file path (``.json``) -> its flat metrics."""


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)


def _p(value: float | None) -> float | None:
    return None if value is None else round(float(value), P_DIGITS)


def _dropped(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` without ``None`` values (DVC shows ``-`` for a key a file lacks), nested dicts included."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            value = _dropped(value)
        if value is not None and value != {}:
            out[key] = value
    return out


def _params(cost: Mapping[str, Any] | None) -> dict[str, Any]:
    if not cost or "train_params" not in cost:
        return {}
    return {"params": cost["train_params"], "params_eff": cost.get("inference_params_max")}


def _metric_names(summary: Mapping[str, Any]) -> list[str]:
    """The metrics of the evaluation summary that were scored (``signatures``: sacreBLEU's, and COMET)."""
    scored = summary.get("signatures")
    return [m for m in summary["metrics"] if scored is None or m in scored or m == "comet"]


def mt_test_set(summary: Mapping[str, Any], cost: Mapping[str, Any]) -> Rows:
    """The rows of one test set's summary (``summary.json`` or one of its ``test_sets``)."""
    test_set = summary.get("test_set", "test")
    offtarget = summary.get("offtarget", {}).get("methods", {})
    first, *others = _metric_names(summary)
    rows: Rows = {}
    for system in summary["methods"]:
        scores = summary["scores"][system]
        averages = scores[first]["averages"]
        row: dict[str, Any] = {first: _round(averages.get("all")), **{s: _round(averages.get(s)) for s in SETS}}
        row.update({m: _round(scores[m]["averages"].get("all")) for m in others})
        if system != summary.get("baseline"):
            row["wr"] = _round(summary["win_ratio"].get(system, {}).get(first, {}).get("all"))
        if system in offtarget:
            row["offtarget"] = _round(offtarget[system]["overall"]["rate"])
        row.update(_params(cost.get(system)))
        rows[f"{test_set}/{system}.json"] = _dropped(row)
    return rows


def mt_rows(summary: Mapping[str, Any]) -> Rows:
    """Rows of the ``evaluate`` stage's ``summary.json``: every system on every test set."""
    cost = summary.get("cost", {})
    rows = mt_test_set(summary, cost)
    for other in summary.get("test_sets", {}).values():
        rows.update(mt_test_set(other, cost))
    return rows


def task_rows(summary: Mapping[str, Any]) -> Rows:
    """Rows of the ``task_eval`` stage's ``summary.json`` (``lsnmt/tasks/scoring.py``)."""
    rows: Rows = {}
    for task, result in summary["tasks"].items():
        for method, entry in result["methods"].items():
            for route, block in entry["routes"].items():
                system = method if route == entry["primary"] else f"{method}_{route}"
                row: dict[str, Any] = {"f1": _round(block["avg"])}
                if "exact_match" in block:
                    em = list(block["exact_match"].values())
                    row["em"] = _round(sum(em) / len(em)) if em else None
                if method != "naive":
                    row["wr"] = _round(block.get("win_ratio"))
                row["params"] = entry["params"]["train"]
                row["params_eff"] = entry["params"]["inference"].get(route)
                rows[f"{task}/{system}.json"] = _dropped(row)
    return rows


def xelm_ppl_rows(summary: Mapping[str, Any]) -> Rows:
    """Rows of the ``lm_eval`` stage's ``summary.json`` (``lsnmt/xelm/perplexities.py``: ``table1_avg``)."""
    return {
        f"{model}.json": {"ppl": _round(ppl)} for model, ppl in summary.get("table1_avg", {}).items() if ppl is not None
    }


def xelm_icl_rows(summary: Mapping[str, Any]) -> Rows:
    """Rows of the ``lm_icl`` stage's ``summary.json`` (``lsnmt/xelm/icl.py``: ``table3``)."""
    return {
        f"{task}/{setting}.json": {"acc": _round(cell["accuracy"])}
        for task, settings in summary.get("table3", {}).items()
        for setting, cell in settings.items()
    }


def claim_rows(summary: Mapping[str, Any]) -> Rows:
    """Rows of the ``claim`` stage's ``summary.json`` (``lsnmt/claim/run.py``): one per claim measured,
    ``{system}-vs-{baseline}.json``: ``delta``, the system's BLEU minus its baseline's on the synthetic task, its
    ``p`` and ``shown`` (the claim's verdict); none while the stage measured nothing."""
    tests = {(c["system"], c["baseline"]): c["bleu"] for c in summary.get("comparisons", [])}
    rows: Rows = {}
    for claim in summary.get("claims", []):
        test = tests.get((claim["system"], claim["baseline"]))
        if test is None or claim["status"] not in ("shown", "not shown"):
            continue
        rows[f"{claim['system']}-vs-{claim['baseline']}.json"] = _dropped(
            {"delta": _round(test.get("delta")), "p": _p(test.get("p")), "shown": claim["status"] == "shown"}
        )
    return rows


def write_rows(out: Path, rows: Rows) -> None:
    """Write ``rows`` as the whole folder ``out`` (built aside, then swapped in: ``lsnmt.io.atomic_dir``)."""
    with atomic_dir(out) as tmp:
        for rel, row in rows.items():
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise ValueError(f"metrics file {rel!r} lies outside {out}")
            write_json(tmp / rel, row)


def write_metrics(rows: Rows, out: Path, status: str = "not run") -> None:
    """Write the stage's per-system ``rows`` as the folder ``out`` (``results/{exp}/metrics/{stage}``,
    :data:`lsnmt.paths.METRICS`, DVC's metrics). A stage with no numbers (lm_icl without its datasets, the claim
    without a ``claim`` section) writes one row saying ``status``: DVC warns of an empty output folder."""
    write_rows(out, rows or {"status.json": {"status": status}})
