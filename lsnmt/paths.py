"""Every path a stage reads or writes, once: the stage table (:mod:`lsnmt.graph.stages`, from which dvc.yaml and the
Snakefile's rules are made) declares these templates, and the stages resolve the same ones (:func:`at`), so a
folder is named in one place. The files inside a stage's output folder are its own module's
(:mod:`lsnmt.data.layout`).

Templates use Snakemake's wildcards: ``{exp}`` the experiment, ``{method}`` / ``{expert}`` / ``{target}`` the job of a
repeated stage, ``{stage}`` an evaluation stage's metrics folder, ``{job}`` an x-elm training job. ``work/`` holds
resumable state no front end declares (both delete declared outputs before a run).
"""

from __future__ import annotations

from pathlib import Path

EMBEDDED = "embedded"
"""The corpora shipped in the repository (the ``embedded`` source)."""

RAW = "data/{exp}/raw"
PREPARED = "data/{exp}/prepared"
SAMPLED = "data/{exp}/sampled"
SPM = "data/{exp}/spm"
BIN = "data/{exp}/bin"
TASK_RAW = "data/{exp}/task_raw"
"""The tasks' datasets as published, with their manifest (``task_prep`` fetches them: ``download`` reads no task)."""
TASK_DATA = "data/{exp}/tasks"
"""Task features (``task_prep``)."""
LM = "data/{exp}/lm"
"""x-elm's documents and token shards (``lm_data``)."""

RESULTS = "results"
"""Every experiment's results (the report reads them all)."""
EXPERIMENT_RESULTS = "results/{exp}"
"""One experiment's results: ``evaluate`` reads its ``train`` and ``translate`` folders below it
(``lsnmt.eval.summary``, ``lsnmt.methods.System.hyp_dir``)."""
SEARCH = f"{EXPERIMENT_RESULTS}/search"
TRAINED = f"{EXPERIMENT_RESULTS}/train"
TRAIN = f"{TRAINED}/{{method}}"
MODEL = f"{TRAIN}/model.pt"
CURVE = f"{TRAIN}/curve.tsv"
CURVE_IMAGE = f"{TRAIN}/curve.png"
"""The curve drawn when the training ends (``lsnmt.train.curve_plot``), a DVC image plot."""
TRAIN_RECORD = f"{TRAIN}/run.json"
"""What ran the training (``lsnmt.record``); a folder output holds its own ``run.json``."""
TRANSLATED = f"{EXPERIMENT_RESULTS}/translate"
TRANSLATE = f"{TRANSLATED}/{{method}}"
EVALUATE = f"{EXPERIMENT_RESULTS}/evaluate"
METRICS = f"{EXPERIMENT_RESULTS}/metrics/{{stage}}"
"""An evaluation stage's numbers, one file per system (and test set or task): DVC's metrics
(``lsnmt/eval/metrics.py``)."""
TASKS = f"{EXPERIMENT_RESULTS}/tasks"
"""Task models' predictions (``task_train``)."""
TASK_EVAL = f"{EXPERIMENT_RESULTS}/task_eval"
CLAIM = f"{EXPERIMENT_RESULTS}/claim"

XELM = f"{EXPERIMENT_RESULTS}/xelm"
CLUSTER = f"{XELM}/cluster"
SEED = f"{XELM}/seed"
EXPERTS = f"{XELM}/experts"
EXPERT = f"{EXPERTS}/{{expert}}"
HMRS = f"{XELM}/hmr"
HMR = f"{HMRS}/{{target}}"
LAPT = f"{XELM}/lapt"
LM_EVAL = f"{XELM}/eval"
ICL = f"{XELM}/icl"

REPORTS = "reports"
PAPER = "reports/paper"
"""The papers' transcribed tables."""
PARAMS_CSV = "reports/params.csv"

CKPT = "work/{exp}/ckpt/{method}"
"""A train job's resumable state."""
SEARCH_WORK = "work/{exp}/search"
TASKS_WORK = "work/{exp}/tasks"
CLAIM_WORK = "work/{exp}/claim"
LM_CKPT = "work/{exp}/xelm/ckpt/{job}"


def at(template: str, exp: str = "", **wild: str) -> Path:
    """``template`` for experiment ``exp`` and the job's other wildcards: ``at(TRAIN, "default", method="naive")``
    is ``results/default/train/naive``. A wildcard left unfilled is an error (``KeyError``)."""
    return Path(template.format(exp=exp, **wild))
