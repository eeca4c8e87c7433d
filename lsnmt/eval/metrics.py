"""The headline numbers DVC shows: one small file of short keys per evaluation stage, and the per-system detail.

The evaluation stages write their detailed results (every direction, language, seed, signature) as plain outputs.
Beside them, under ``results/{exp}/metrics/``, each writes

* ``<stage>.json``, the one file DVC declares as metrics: a number per system, keyed ``<metric>.<system>``
  (nested JSON that DVC flattens with dots, ``bleu.naive``), so that ``dvc exp show`` names its columns by these
  short keys (it prefixes the file path only to a key that two files share) and ``dvc metrics diff`` shows what
  moved; the default's columns fit a 200-character line (``tests/test_metrics.py``);
* ``<stage>/``, the per-system detail below (a plain output, cached by DVC, not a metric): every test set, every
  metric, the off-target rate and parameter counts, one flat JSON file per system
  (``dvc metrics show results/{exp}/metrics/<stage>`` prints it as a table).

Every value is copied from the stage's own summary, rounded as the papers print it (``DIGITS``); a number the
summary withholds (a win ratio between degenerate outputs, ``lsnmt/eval/degenerate.py``) is left out, never filled
in.

Headline (``<stage>.json``, :func:`headline`):

* ``evaluate``: on the first test set, the experiment's first metric (``evaluate.metrics[0]``, e.g. ``bleu``)
  averaged over all directions per system (LSL Tables 1-3, the average columns of LMS-FD Tables 1-3 and CLM
  Tables 1-2), and ``wr.<system>``, its win ratio (%) against ``evaluate.baseline`` (LMS-FD Sec. 4, CLM Sec. 4.3);
* ``task_eval``: ``<task>.<system>``, the F1 averaged over languages (LMS-FD Tables 4-5);
* ``lm_eval``: ``ppl.<model>``, the perplexity averaged over the pretraining languages (x-elm Table 1);
* ``lm_icl``: ``<task@shots>.<setting>``, the accuracy (%) averaged over languages (x-elm Table 3).

Detail (``<stage>/``, the ``*_rows`` functions):

* ``evaluate`` (``mt_rows``): ``{test set}/{system}.json``. The first metric with its unweighted direction
  averages ``all``, ``en-xx`` and ``xx-en`` (``lsnmt/eval/aggregate.py``); every other metric (spBLEU, chrF,
  COMET) as its average over all directions; ``wr``; ``offtarget``, the pooled off-target rate (%) on the
  summary's scope (zero-shot directions, CLM Table 6; else en-xx); ``params`` and ``params_eff``, training
  parameters and the parameters one direction uses at inference (the largest over directions; LSL's |θ| and
  |θ_eff|).
* ``task_eval`` (``task_rows``): ``{task}/{system}.json`` (LMS+FD's other route as ``<method>_<route>``, as in
  MT): ``f1`` (NER span F1, QA F1) and, for QA, ``em``, averages over languages of the seed means; ``wr`` on F1
  against naive (LMS-FD Tables 4-5); ``params``, ``params_eff``.
* ``lm_eval`` (``xelm_ppl_rows``): ``{model}.json``, ``ppl`` for seed, dense, TF-IDF top-1 / ensemble and
  typology experts.
* ``lm_icl`` (``xelm_icl_rows``): ``{task@shots}/{setting}.json``, ``acc``; none while no task ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsnmt.io import atomic_dir, write_json

DIGITS = 2
"""Scores, rates and perplexities as the papers print them: two decimals."""
SETS = ("all", "en-xx", "xx-en")
"""Direction averages kept for the first metric (the papers' headline columns); the summary has every set."""

Rows = dict[str, dict[str, Any]]
"""Relative file path (``.json``) -> its flat metrics."""


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), DIGITS)


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
        row: dict[str, Any] = {first: {s: _round(scores[first]["averages"].get(s)) for s in SETS}}
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
    """Rows of the ``task_eval`` stage's ``summary.json`` (``lsnmt/tasks/evaluate.py``)."""
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
    """Rows of the ``lm_eval`` stage's ``summary.json`` (``lsnmt/xelm/evaluate.py``: ``table1_avg``)."""
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


HEADLINE = {"evaluate": ("wr",), "task_eval": ("f1",), "lm_eval": ("ppl",), "lm_icl": ("acc",)}
"""The detail keys each stage's headline keeps (``evaluate`` also keeps its first metric's ``all`` average)."""


def headline(stage: str, rows: Rows) -> dict[str, dict[str, float]]:
    """The short-keyed numbers of ``<stage>.json`` (module docstring) from the stage's detail ``rows``.

    ``evaluate``: rows of the first test set only (the first row's folder: :func:`mt_rows` lists it first);
    ``lm_eval``: ``{"ppl": {model: ppl}}``; ``task_eval`` / ``lm_icl``: ``{group: {system: value}}``, the group
    being the row's folder (task, or task@shots)."""
    if stage not in HEADLINE:
        raise ValueError(f"no headline for stage {stage!r}: one of {', '.join(HEADLINE)}")
    out: dict[str, dict[str, float]] = {}
    first = next(iter(rows), "").rpartition("/")[0]
    for rel, row in rows.items():
        group, _, name = rel.rpartition("/")
        system = name.removesuffix(".json")
        if stage == "evaluate":
            if group != first:
                continue
            for metric, value in row.items():
                if isinstance(value, Mapping) and "all" in value:  # the first metric: its direction averages
                    out.setdefault(metric, {})[system] = value["all"]
        for key in HEADLINE[stage]:
            if key in row:
                out.setdefault(group if stage in ("task_eval", "lm_icl") else key, {})[system] = row[key]
    return out


def write_rows(out: Path, rows: Rows) -> None:
    """Write ``rows`` as the whole folder ``out`` (built aside, then swapped in: ``lsnmt.io.atomic_dir``)."""
    with atomic_dir(out) as tmp:
        for rel, row in rows.items():
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise ValueError(f"metrics file {rel!r} lies outside {out}")
            write_json(tmp / rel, row)


def write_metrics(stage: str, rows: Rows, detail: Path, headline_file: Path) -> None:
    """Write the stage's per-system ``rows`` as the folder ``detail`` (``results/{exp}/metrics/{stage}``,
    :data:`lsnmt.paths.METRICS`) and their :func:`headline` as ``headline_file`` (``.../{stage}.json``,
    :data:`lsnmt.paths.METRICS_FILE`, DVC's metrics)."""
    # a stage with no numbers (lm_icl without tasks) still writes one file: DVC warns of an empty output folder
    write_rows(detail, rows or {"status.json": {"status": "no numbers", "stage": stage}})
    write_json(headline_file, headline(stage, rows))
