"""The NER / QA protocol (``xlmr_tasks``, LMS-FD Sec. 5.3-5.4, App. B-C): each task's settings and its methods,
with sources (what the paper states, and the XTREME recipes of the authors' earlier XLM-R code for the rest,
``lsnmt/tasks/config.py``)."""

from __future__ import annotations

from lsnmt.experiment.params import Params
from lsnmt.protocol.markdown import table
from lsnmt.protocol.methods import settings
from lsnmt.tasks.config import TaskConfig

EXPERIMENTS = ("xlmr_tasks",)

RECIPE = "not stated: the XTREME recipe of the authors' XLM-R code (Xu et al. 2022, {script})"
SCRIPTS = {"ner": "train_panx.sh", "qa": "train_qa.sh"}


def rows(t: TaskConfig) -> list[tuple[str, str, str]]:
    """``(setting, value, source)`` of one task."""
    recipe = RECIPE.format(script=SCRIPTS[t.kind])
    data = ("Sec. 5.3 (WikiANN, Pan et al. 2017; Rahimi et al.'s splits), App. B / Table 7 (24 languages)"
            if t.kind == "ner" else "Sec. 5.4 (TyDiQA-GoldP, Clark et al. 2020; its dev set reported), App. C / "
            "Table 8 (6 languages)")
    length = f"{t.max_length} tokens" + (f", stride {t.doc_stride}, query <= {t.max_query_length}, answer <= "
                                          f"{t.max_answer_length}" if t.kind == "qa" else "")
    return [
        ("data", f"{t.kind}: {' '.join(t.languages)}", data),
        ("encoder", f"{t.encoder.init} {t.encoder.name}", "Sec. 5.3-5.4 (XLM-R base)"),
        ("epochs, seeds", f"{t.epochs}, {list(t.seeds)} averaged", "Sec. 5.3-5.4 (20 epochs, 3 seeds)"),
        ("dropout", f"{t.dropout:g}", "Sec. 5.3-5.4 (0.1)"),
        ("optimizer", (f"AdamW lr {t.lr:g}, eps {t.adam_eps:g}, weight decay {t.weight_decay:g}, clip "
                       f"{t.clip_norm:g}, {t.warmup_steps} warm-up, linear decay"), recipe),
        ("batch", f"{t.batch_size} examples of one language", recipe + "; one language per batch: Sec. 5"),
        ("length", length, recipe),
        ("selection", t.select, recipe + ("" if t.kind == "ner" else "; TyDiQA-GoldP has no other dev set")),
    ]


METHOD_SOURCE = {"naive": "Sec. 5.3-5.4 (XLM-R base fine-tuned)",
                 "lms": "Sec. 5.3-5.4 (LMS, d = 32, in each FFN, language-wise: one language per example)",
                 "lms_fd": "Sec. 5.3-5.4 (LMS+FD, d = 32; Share and LS routes of one training)"}


def section(params: Params) -> list[str]:
    """The NER / QA tables of PROTOCOL.md."""
    out = []
    for name in (n for n in EXPERIMENTS if n in params.experiments):
        exp = params.get(name)
        for task, cfg in exp.task_cfg.items():
            out += ["", f"## {name}: {task} (lmsfd)", "", *table(("setting", "value", "source"), rows(cfg))]
        methods = exp.task_methods or ("naive", *exp.task_method_cfg)
        entries = {m: exp.task_method_cfg[m].entry if m in exp.task_method_cfg else {"kind": "naive"} for m in methods}
        body = [(m, str(entries[m]["kind"]), settings(entries[m]), METHOD_SOURCE.get(m, "")) for m in methods]
        out += ["", f"Methods of `{name}` (task_method_cfg):", "", *table(("method", "kind", "settings", "source"),
                                                                           body)]
    return out
