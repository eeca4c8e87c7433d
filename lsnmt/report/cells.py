"""Selectors: where the number of one table cell comes from in our results.

A selector maps ``(run, method)`` to a float or ``None`` ("not run": the file or the entry is missing). ``kind``
picks the tolerance that decides "reproduced" (``lsnmt/report/table.py``): scores in points, parameters relative.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lsnmt.report.runs import Results, Run

Kind = Literal["score", "params", "rate", "ppl", "text", "count"]
DEFAULT = "default"
"""The embedded default experiment: its cells are filled from its own run, never from paper-scale data."""


@dataclass(frozen=True)
class Row:
    """Our side of one printed row: the method name in params.yaml and, for parameter columns, the row's
    ``method`` label in ``reports/params.csv`` (defaults to the method name)."""

    method: str
    params: str = field(default="")
    arg: str = field(default="")
    """What the printed row names besides the method (a language code, a rank), for selectors that need it."""

    @property
    def params_label(self) -> str:
        return self.params or self.method


def _dig(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def metric_of(run: Run, metric: str) -> str:
    """``primary``: the run's first configured metric (``evaluate.metrics[0]``); any other name as given."""
    return run.exp.evaluate.metrics[0] if metric == "primary" else metric


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


@dataclass(frozen=True, kw_only=True)
class Selector:
    kind: Kind = "score"

    def value(self, results: Results, run: Run, row: Row) -> float | str | None:
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Avg(Selector):
    """Average ``metric`` over a direction set of the summary (``all``, ``en-xx``, ``xx-en``, ``zero-shot`` …)."""

    metric: str = "primary"
    subset: str = "all"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        return _num(_dig(run.summary, "scores", row.method, metric_of(run, self.metric), "averages", self.subset))


@dataclass(frozen=True, kw_only=True)
class Group(Selector):
    """Average over a resource group of one side (``en-xx``/``xx-en`` x ``low``/``medium``/``high``)."""

    metric: str = "primary"
    side: str = "en-xx"
    group: str = "low"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        m = metric_of(run, self.metric)
        return _num(_dig(run.summary, "scores", row.method, m, "groups", self.side, self.group))


@dataclass(frozen=True, kw_only=True)
class Both(Selector):
    """Average of ``en-l`` and ``l-en`` for language ``lang`` (the LMS-FD IWSLT tables)."""

    metric: str = "primary"
    lang: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        m = metric_of(run, self.metric)
        return _num(_dig(run.summary, "scores", row.method, m, "both_directions", self.lang))


@dataclass(frozen=True, kw_only=True)
class Dir(Selector):
    """One direction's score (``results/{exp}/evaluate/{method}/{src}-{tgt}.json``)."""

    metric: str = "primary"
    direction: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        m = metric_of(run, self.metric)
        return _num(_dig(run.direction(row.method, self.direction), "scores", m, "score"))


@dataclass(frozen=True, kw_only=True)
class WinRatio(Selector):
    """Share (%) of directions of ``subset`` where the method beats the baseline."""

    metric: str = "primary"
    subset: str = "all"
    kind: Kind = "rate"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        return _num(_dig(run.summary, "win_ratio", row.method, metric_of(run, self.metric), self.subset))


@dataclass(frozen=True, kw_only=True)
class OffTarget(Selector):
    """Off-target rate (%) over the zero-shot directions."""

    kind: Kind = "rate"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        return _num(_dig(run.summary, "offtarget", "methods", row.method, "overall", "rate"))


@dataclass(frozen=True, kw_only=True)
class Similarity(Selector):
    """Top-1 similarity-search accuracy (%) on a multi-way set, over ``part`` (``all``, ``english_centric``…)."""

    corpus: str = "ntrex128"
    part: str = "all"
    kind: Kind = "rate"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        return _num(_dig(run.summary, "similarity", row.method, self.corpus, self.part))


@dataclass(frozen=True, kw_only=True)
class Params(Selector):
    """Parameter count (absolute): trained (``train``) or used at inference (``inference``).

    At paper scale the count comes from ``reports/params.csv`` (the ``params`` stage counts the papers'
    configurations without training: a real reproduction of the #params columns); for a run, from its summary.
    ``table`` picks the params.csv row of a paper table (e.g. ``"LMS-FD (Xu et al. 2023)", "2"``).
    """

    which: Literal["train", "inference"] = "train"
    paper: str = ""
    table: str | tuple[str, ...] = ""
    """The params.csv ``table`` to look in; a tuple: the first that has the row."""
    experiment: str = ""
    """The params.csv ``experiment`` label when it differs from the run's name (CLM rows say ``opus100``)."""
    kind: Kind = "params"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        if run.name != DEFAULT:
            for table in (self.table,) if isinstance(self.table, str) else self.table:
                for r in results.param_rows:
                    if (r["experiment"] == (self.experiment or run.name) and r["method"] == row.params_label
                            and r["paper"] == self.paper and r["table"] == table):
                        return float(r[f"{self.which}_params"])
        cost = _dig(run.summary, "cost", row.method)
        got = _num(_dig(cost, "train_params" if self.which == "train" else "inference_params_max"))
        return got


@dataclass(frozen=True, kw_only=True)
class In(Selector):
    """``inner`` read from another paper-scale experiment (a table whose rows are different datasets); on
    the embedded default run it reads the default run itself."""

    experiment: str = ""
    inner: Selector = field(default_factory=Avg)

    def value(self, results: Results, run: Run, row: Row) -> float | str | None:
        target = run if run.name == DEFAULT else results.run(self.experiment)
        return None if target is None else self.inner.value(results, target, row)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", self.inner.kind)


def _top5(run: Run, method: str, side: str) -> dict[str, list[str]] | None:
    got = _dig(run.summary, "atp", method, side, "top5")
    return got if isinstance(got, dict) and got else None


@dataclass(frozen=True, kw_only=True)
class SimilarList(Selector):
    """The 5 languages whose ATP vectors are closest to the row's language (``row.arg``) on ``side``
    (CLM Tables 10, 11), space-separated like the paper."""

    side: str = "encoder"
    kind: Kind = "text"

    def value(self, results: Results, run: Run, row: Row) -> str | None:
        top = _top5(run, row.method, self.side)
        return " ".join(top[row.arg]) if top and row.arg in top else None


@dataclass(frozen=True, kw_only=True)
class SimilarAt(Selector):
    """The ``row.arg``-th (1-based) most similar language to ``lang`` on ``side`` (CLM Table 4)."""

    lang: str = ""
    side: str = "encoder"
    kind: Kind = "text"

    def value(self, results: Results, run: Run, row: Row) -> str | None:
        top = _top5(run, row.method, self.side)
        rank = int(row.arg)
        return top[self.lang][rank - 1] if top and self.lang in top and len(top[self.lang]) >= rank else None


@dataclass(frozen=True, kw_only=True)
class DataCount(Selector):
    """Sentence pairs of one direction in our prepared data (``data/{exp}/prepared/report.json``): training
    pairs kept by the prepare filters (all corpora), or the lines of the valid / test set. The direction is
    ``pair`` (``"en-it"``), else ``row.arg``-``other``, else ``row.arg`` itself; either orientation counts
    (the data is symmetric)."""

    split: Literal["train", "valid", "test"] = "train"
    pair: str = ""
    other: str = ""
    kind: Kind = "count"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        rep = run.prepared_report
        if rep is None:
            return None
        a, _, b = (self.pair or (f"{row.arg}-{self.other}" if self.other else row.arg)).lower().partition("-")
        for d in (f"{a}-{b}", f"{b}-{a}"):
            got = rep.get(self.split, {}).get(d)
            if got is None:
                continue
            if self.split == "train":
                return float(sum(c.get("kept", 0) for c in got.values()))
            return _num(got.get("lines"))
        return None
