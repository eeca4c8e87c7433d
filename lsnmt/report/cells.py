"""Selectors: where the number of one table cell comes from in our results.

A selector maps ``(run, method)`` to a float or ``None`` ("not run": the file or the entry is missing). ``kind``
picks the tolerance that decides "reproduced" (``lsnmt/report/paper_table.py``): scores in points, parameters relative.

Degenerate output (``lsnmt/eval/degenerate.py``: near-empty hypotheses, or both systems below 1 BLEU) is never
read as evidence: a translation score of a degenerate system carries :data:`DEGENERATE`, a win ratio against
the baseline between degenerate outputs reads :data:`NO_VERDICT`, and so does a significance mark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from lsnmt.report.runs import DEFAULTS, Results, Run

Kind = Literal["score", "params", "rate", "ppl", "text", "count", "comet", "size"]
"""``comet``: a score on COMET's 0-1 scale (compared with ``Binding.comet_tol``, printed with 4 decimals);
``size``: a data size in the paper's unit (e.g. GiB), compared relatively like counts (``Binding.params_tol``)."""
DEFAULT = "default"
"""The embedded default experiment: its cells are filled from its own run, never from paper-scale data."""
DEGENERATE = "‡"
"""Printed after the score of a degenerate system, and after a direction the paired bootstrap left untested
because the outputs are degenerate (``summary.json``'s ``degenerate``)."""
NO_VERDICT = "n/a (degenerate)"
"""A win ratio the evaluate stage withheld: the system's and the baseline's outputs are degenerate."""


@dataclass(frozen=True)
class Row:
    """Our side of one printed row: the method name in params.yaml and, for parameter columns, the row's
    ``method`` label in ``reports/params.csv`` (defaults to the method name)."""

    method: str
    params: str = field(default="")
    arg: str = field(default="")
    """What the printed row names besides the method (a language code, a rank), for selectors that need it."""
    minus: str = field(default="")
    """A printed difference column (``∆``): the cell is this method's value minus method ``minus``'s."""
    params_exp: str = field(default="")
    """The ``reports/params.csv`` experiment label of this row, where it differs from the column's (LSL Table 5
    mixes separate- and shared-decoder rows)."""

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

    def mark(self, results: Results, run: Run, row: Row) -> str:
        """A mark printed after our value (a significance dagger, a bracketed share); ``""``: none."""
        del results, run, row
        return ""

    def printed(self, run: Run | None, line: Any, value: float | None) -> float | None:
        """The paper's number our paper-scale value is compared with (``line``: the printed row): as printed,
        unless a selector compares something derived from it (x-elm's relative perplexity gains)."""
        del run, line
        return value


@dataclass(frozen=True, kw_only=True)
class Translation(Selector):
    """A selector of the evaluate stage's translation results: :data:`DEGENERATE` follows a degenerate
    system's value."""

    def mark(self, results: Results, run: Run, row: Row) -> str:
        return DEGENERATE if row.method in (_dig(run.summary, "degenerate", "systems") or {}) else ""


@dataclass(frozen=True, kw_only=True)
class Avg(Translation):
    """Average ``metric`` over a direction set of the summary (``all``, ``en-xx``, ``xx-en``, ``zero-shot`` …)."""

    metric: str = "primary"
    subset: str = "all"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        return _num(_dig(run.summary, "scores", row.method, metric_of(run, self.metric), "averages", self.subset))


@dataclass(frozen=True, kw_only=True)
class Group(Translation):
    """Average over a resource group of one side (``en-xx``/``xx-en`` x ``low``/``medium``/``high``)."""

    metric: str = "primary"
    side: str = "en-xx"
    group: str = "low"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        m = metric_of(run, self.metric)
        return _num(_dig(run.summary, "scores", row.method, m, "groups", self.side, self.group))


@dataclass(frozen=True, kw_only=True)
class Both(Translation):
    """Average of ``en-l`` and ``l-en`` for language ``lang`` (the LMS-FD IWSLT tables)."""

    metric: str = "primary"
    lang: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        m = metric_of(run, self.metric)
        return _num(_dig(run.summary, "scores", row.method, m, "both_directions", self.lang))


@dataclass(frozen=True, kw_only=True)
class Dir(Translation):
    """One direction's score (``results/{exp}/evaluate/{method}/{src}-{tgt}.json``)."""

    metric: str = "primary"
    direction: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        m = metric_of(run, self.metric)
        return _num(_dig(run.direction(row.method, self.direction), "scores", m, "score"))


@dataclass(frozen=True, kw_only=True)
class WinRatio(Translation):
    """Share (%) of directions of ``subset`` where the method beats the baseline; :data:`NO_VERDICT` where the
    evaluate stage withheld it (degenerate outputs)."""

    metric: str = "primary"
    subset: str = "all"
    kind: Kind = "rate"

    def value(self, results: Results, run: Run, row: Row) -> float | str | None:
        if row.method in (_dig(run.summary, "degenerate", "pairs") or {}):
            return NO_VERDICT
        return _num(_dig(run.summary, "win_ratio", row.method, metric_of(run, self.metric), self.subset))

    def mark(self, results: Results, run: Run, row: Row) -> str:
        return "" if self.value(results, run, row) == NO_VERDICT else super().mark(results, run, row)


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
        if run.name not in DEFAULTS:
            for table in (self.table,) if isinstance(self.table, str) else self.table:
                for r in results.param_rows:
                    if (r["experiment"] == (row.params_exp or self.experiment or run.name)
                            and r["method"] == row.params_label
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
        target = run if run.name in DEFAULTS else results.run(self.experiment)
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


def _direction_scores(run: Run, method: str, metric: str, pairs: list[str]) -> list[float] | None:
    """The per-direction scores of ``pairs`` (``None`` if any is missing: never a partial average)."""
    out = []
    for d in pairs:
        got = _num(_dig(run.direction(method, d), "scores", metric, "score"))
        if got is None:
            return None
        out.append(got)
    return out


@dataclass(frozen=True, kw_only=True)
class DirMean(Translation):
    """Mean ``metric`` over the directions of ``subset`` (a ``direction_sets`` entry of the summary) whose source
    / target is ``src`` / ``tgt`` (a language code or a group of ``evaluate.resource_groups``; ``""``: any) and
    whose target is not in ``not_tgt``; read from the per-direction score files. With ``lang``, ``row.arg``
    says ``into`` (target ``lang``) or ``from`` (source ``lang``): LSL Table 2."""

    metric: str = "primary"
    subset: str = "all"
    src: str = ""
    tgt: str = ""
    not_tgt: tuple[str, ...] = ()
    lang: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        names = _dig(run.summary, "direction_sets", self.subset)
        if not isinstance(names, list):
            return None
        groups = _dig(run.summary, "groups", "languages") or {}

        src, tgt = self.src, self.tgt
        if self.lang:
            if row.arg not in ("into", "from"):
                raise ValueError(f"DirMean(lang={self.lang!r}) needs Row.arg 'into' or 'from', got {row.arg!r}")
            src, tgt = ("", self.lang) if row.arg == "into" else (self.lang, "")

        def ok(lang: str, want: str) -> bool:
            return not want or lang == want.lower() or groups.get(lang) == want

        pairs = [d for d in names if ok(d.split("-")[0], src) and ok(d.split("-")[1], tgt)
                 and d.split("-")[1] not in self.not_tgt]
        got = _direction_scores(run, row.method, metric_of(run, self.metric), pairs) if pairs else None
        return sum(got) / len(got) if got else None


@dataclass(frozen=True, kw_only=True)
class GroupPair(Translation):
    """Average over every direction from group A to group B (summary ``group_pairs``, key ``"A->B"``)."""

    metric: str = "primary"
    pair: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        m = metric_of(run, self.metric)
        return _num(_dig(run.summary, "scores", row.method, m, "group_pairs", self.pair))


@dataclass(frozen=True, kw_only=True)
class MatrixDir(Translation):
    """One direction of a printed matrix: source ``row.arg``, target ``tgt`` (LSL Tables 8, 9). With
    ``marked_by``, a ``†`` follows the value where the evaluate stage's paired bootstrap of method ``marked_by``
    against ``evaluate.baseline`` on this direction is not significant (p >= ``evaluate.significance``), and
    :data:`DEGENERATE` where it gave no verdict (degenerate outputs); without ``marked_by``, the latter after a
    degenerate system's value."""

    metric: str = "primary"
    tgt: str = ""
    marked_by: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        got = _direction_scores(run, row.method, metric_of(run, self.metric), [f"{row.arg}-{self.tgt}"])
        return got[0] if got else None

    def mark(self, results: Results, run: Run, row: Row) -> str:
        if not self.marked_by:
            return super().mark(results, run, row)
        test = _dig(run.summary, "significance", self.marked_by, metric_of(run, self.metric), "directions",
                    f"{row.arg}-{self.tgt}")
        sig = test.get("significant", True) if isinstance(test, dict) else True
        return "†" if sig is False else DEGENERATE if sig is None else ""
