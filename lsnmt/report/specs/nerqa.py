"""LMS-FD (Xu et al.) Tables 4, 5, 7, 8 bound to our NER / QA runs on XLM-R (Sec. 5.3-5.4, App. B-C).

Scores come from ``results/{exp}/task_eval/summary.json`` (the ``task_eval`` stage: F1 per language, mean
over seeds; ``avg.`` the mean over languages; WR against the naive model). The paper-scale experiment is
``xlmr_tasks``; the embedded default's tiny tasks fill their own cells (5 NER / 6 QA languages, so Table 7's
other languages read "not run" there). Rows name a method and, for LMS+FD, the inference route (``Row.arg``):
LMS+FD-Share and LMS+FD-LS are one trained model read through its two routes. ``#params`` at paper scale
are ``reports/params.csv``'s XLM-R rows (``reports/paper/counts.yaml``; 2.4-2.8% above the paper, whose naive
270M is XLM-R base's nominal size: see the row note), on the default run the tiny model's own counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from lsnmt.experiment.params import Experiment
from lsnmt.report.cells import Kind, Row, Selector, _dig, _num
from lsnmt.report.paper_table import Binding
from lsnmt.report.runs import DEFAULTS, Results, Run
from lsnmt.report.specs.lmsfd import PAPER as LMS_PAPER

EXPERIMENT = "xlmr_tasks"
SUMMARY = "task_eval/summary.json"
NER_LANGS = ("az", "pt", "ms", "af", "kk", "ar", "qu", "te", "vi", "my", "tl", "fr", "hi", "ro", "eu", "tr", "zh",
             "et", "hu", "nl", "id", "el", "he", "en")
QA_LANGS = ("bn", "en", "fi", "id", "ko", "sw")


def _route_block(run: Run, task: str, row: Row) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(method entry, route block) of ``row`` in the run's task summary; ``None``: not run."""
    entry = _dig(run.json(SUMMARY), "tasks", task, "methods", row.method)
    if not isinstance(entry, dict):
        return None
    route = row.arg if row.arg in entry["routes"] else entry["primary"]
    return entry, entry["routes"][route] | {"route": route}


@dataclass(frozen=True, kw_only=True)
class TaskScore(Selector):
    """F1 of ``task`` in language ``lang`` (mean over seeds), or the mean over languages (``lang=""``)."""

    task: str
    lang: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        got = _route_block(run, self.task, row)
        if got is None:
            return None
        block = got[1]
        return _num(block["scores"].get(self.lang) if self.lang else block["avg"])


@dataclass(frozen=True, kw_only=True)
class TaskWinRatio(Selector):
    """Share (%) of the task's languages where the method beats the naive model."""

    task: str
    kind: Kind = "rate"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        got = _route_block(run, self.task, row)
        return None if got is None else _num(got[1].get("win_ratio"))


@dataclass(frozen=True, kw_only=True)
class TaskParams(Selector):
    """Trained (``train``) or deployed-through-the-route (``inference``) parameters: at paper scale the
    params.csv row (paper, ``table``, ``experiment``, method label); on the default run the tiny model's."""

    which: Literal["train", "inference"] = "train"
    task: str
    table: str
    kind: Kind = "params"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        if run.name not in DEFAULTS:
            for r in results.param_rows:
                if (r["paper"], r["table"], r["experiment"], r["method"]) == (LMS_PAPER, self.table, self.task,
                                                                               row.params_label):
                    return float(r[f"{self.which}_params"])
            return None
        got = _route_block(run, self.task, row)
        if got is None:
            return None
        entry, block = got
        return _num(entry["params"]["train"] if self.which == "train" else entry["params"]["inference"][block["route"]])


def describe_tasks(task: str):
    """Caption line of an experiment's ``task`` (its data, encoder and budget), for :class:`Binding`."""

    def line(exp: Experiment) -> str:
        t = exp.task_cfg.get(task)
        if t is None:
            return f"experiment `{exp.name}` has no task {task!r}"
        enc = (f"pretrained `{t.encoder.name}`" if t.encoder.init == "pretrained" else
               f"random XLM-R {t.encoder.hidden_size}/{t.encoder.ffn_dim}, {t.encoder.layers} layers")
        methods = ", ".join(f"{k} d={v.cfg.rank}" for k, v in exp.task_method_cfg.items())
        return (f"experiment `{exp.name}`, task `{task}` ({t.kind.upper()}, {len(t.languages)} languages; "
                f"{t.citation or t.source.kind}); {enc}; {t.epochs} epochs, batch {t.batch_size}, lr {t.lr:g}, "
                f"seeds {', '.join(map(str, t.seeds))}; {methods}")

    return line


ROWS_GAINS = {"LMS": Row("lms"), "LMS+FD-Share": Row("lms_fd", "lms+fd-share", arg="share"),
              "LMS+FD-LS": Row("lms_fd", "lms+fd-ls", arg="ls")}
NOTE = ("LMS+FD-Share and LMS+FD-LS: one trained LMS+FD model, predicted through the shared and the LS route. "
        "#params: our counts of XLM-R base are 7.45M above the paper's throughout (its 270M is XLM-R base's "
        "nominal size; the added parameters match), so those cells differ by 2.4-2.8%: reports/params.csv, "
        "note of the XLM-R rows.")


def _summary_table(stem: str, task: str, table: str, baseline_label: str, langs: tuple[str, str]) -> Binding:
    cols: dict = {f"Sampled Language / {lang}": TaskScore(task=task, lang=lang) for lang in langs}
    cols |= {"avg.": TaskScore(task=task), "WR (%)": TaskWinRatio(task=task),
             "#params / Tra.": TaskParams(which="train", task=task, table=table),
             "#params / Inf.": TaskParams(which="inference", task=task, table=table)}
    return Binding("lmsfd", stem, EXPERIMENT, gains=True, columns=cols,
                   rows={baseline_label: Row("naive"), **ROWS_GAINS}, note=NOTE, describe=describe_tasks(task))


BINDINGS = {
    ("lmsfd", "table4"): _summary_table("table4", "wikiann", "4", "Naive MNER", ("qu", "vi")),
    ("lmsfd", "table5"): _summary_table("table5", "tydiqa", "5", "Naive MQA", ("bn", "sw")),
    ("lmsfd", "table7"): Binding(
        "lmsfd", "table7", EXPERIMENT,
        columns={**{lang: TaskScore(task="wikiann", lang=lang) for lang in NER_LANGS},
                 "avg.": TaskScore(task="wikiann"), "WR (%)": TaskWinRatio(task="wikiann")},
        rows={"Naive NER": Row("naive"), "LMS": Row("lms"), "LMS-FD-Share": Row("lms_fd", arg="share"),
              "LMS-FD-LS": Row("lms_fd", arg="ls")},
        note="F1 per language, mean over seeds; LMS-FD-Share / -LS are the two routes of one LMS+FD model.",
        describe=describe_tasks("wikiann")),
    ("lmsfd", "table8"): Binding(
        "lmsfd", "table8", EXPERIMENT,
        columns={**{lang: TaskScore(task="tydiqa", lang=lang) for lang in QA_LANGS},
                 "avg.": TaskScore(task="tydiqa")},
        rows={"Naive MQA": Row("naive"), "LMS": Row("lms"), "LMS+FD-LS": Row("lms_fd", arg="ls"),
              "LMS+FD-Share": Row("lms_fd", arg="share")},
        note="SQuAD v1.1 F1 per language (TyDiQA-GoldP dev set), mean over seeds.",
        describe=describe_tasks("tydiqa")),
}
