"""Every stage of the pipeline, once: what it reads, writes, and which params.yaml keys it depends on.

dvc.yaml is generated from this table (``python -m lsnmt.graph.dvc``) and the Snakefile reads each rule's params
and code dependencies from it (:mod:`lsnmt.graph.snakemake`); ``tests/test_graph.py`` checks both. Paths use
Snakemake's wildcards: ``{exp}`` the experiment, ``{method}`` / ``{expert}`` / ``{target}`` the job a stage is
repeated over (:data:`EACH`). The code a stage runs is not listed here: it is what ``stages.<name>`` imports
(:mod:`lsnmt.graph.imports`).

``params`` are keys under ``experiments.<exp>``, exactly the sections the stage reads, so that editing one reruns
the stages that read it and nothing else (``method_cfg.{method}``: the train job of that method only). A stage on a
view (:mod:`lsnmt.view`: ``view``, the class its module loads as ``VIEW``) has the view's keys as its params, one
list (:func:`viewed`); ``jobs``
are top-level job lists; ``linked`` are sections read from every experiment the papers' #params rows link
(``reports/paper/counts.yaml``) that params.yaml defines: :func:`linked_keys`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from lsnmt import paths as P
from lsnmt.claim.config import ClaimView
from lsnmt.data.config import DownloadView, EncodeView, PrepareView, SampleView, SpmView
from lsnmt.decode.config import TranslateView
from lsnmt.eval.config import EvaluateView
from lsnmt.tasks.config import TaskEvalView, TaskPrepView
from lsnmt.tasks.train_view import TaskTrainView
from lsnmt.train.config import SearchView, TrainView
from lsnmt.typed import load_yaml
from lsnmt.view import keys
from lsnmt.xelm.config import DENSE, IclView, LMTrainView, XelmView
from lsnmt.xelm.data_config import LMDataView

EACH = {"method": "methods", "expert": "xelm_experts", "target": "xelm_targets"}
"""Wildcard of a repeated stage -> the params.yaml job list it runs over (``train@<method>``, ``lm_expert@<id>``)."""

Need = Literal["translation", "search", "tasks", "xelm", "claim"]
NEEDS: dict[Need, str] = {
    "translation": "a method to train and train_directions other than none",
    "search": "a `search` section that is not empty",
    "tasks": "a task to run (its `tasks` job list)",
    "xelm": "an `xelm` section",
    "claim": "a `claim` section",
}
"""What a conditional stage needs (:attr:`Stage.needs`), as :func:`lsnmt.graph.snakemake.planned` checks it."""
Job = Literal["cpu", "gpu", "train", "lm_train"]
Pick = Callable[[Mapping[str, Any], str], bool]


def dense_expert(exp: Mapping[str, Any], job: str) -> bool:
    """The dense model of x-elm, which LAPT continues (x-elm Sec. 5.3)."""
    return job == DENSE


def main_typology_expert(exp: Mapping[str, Any], job: str) -> bool:
    """A typology expert of the main ``k``: HMR's donors (x-elm Sec. 6; ``cluster/donors.json`` says which)."""
    return job.startswith(f"typology-k{exp['xelm']['experts']['main_k']}-")


@dataclass(frozen=True)
class Out:
    """One declared output: DVC ``outs`` / ``metrics`` / ``plots`` (``cache: false`` for outputs DVC need not keep:
    ``results/`` and ``reports/`` are Git-ignored, so what ``dvc metrics diff``, ``dvc plots diff`` and ``dvc exp show``
    read from another revision, the metrics folders and training curves, is cached)."""

    path: str
    role: Literal["outs", "metrics", "plots"] = "outs"
    cache: bool = True
    xy: tuple[str, str] | None = None
    """A plot's x and y columns."""
    report: Mapping[str, Any] | None = None
    """Snakemake only: the output is attached to ``snakemake --report`` with these arguments of its ``report()``."""

    @property
    def is_dir(self) -> bool:
        """A folder output (Snakemake's ``directory()``): its last component has no suffix."""
        return "." not in PurePosixPath(self.path).name


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One stage: ``python -m stages.<name>``."""

    name: str
    log: str
    outs: tuple[Out, ...]
    deps: tuple[str, ...] = ()
    """Data the stage reads: other stages' outputs, and files its code reads (``embedded``, ``reports/paper``)."""
    params: tuple[str, ...] = ()
    jobs: tuple[str, ...] = ()
    linked: tuple[str, ...] = ()
    """Sections of each linked experiment (:func:`linked_keys`), for a stage that reads other experiments."""
    each: str | None = None
    per_experiment: bool = True
    note: str = ""
    """A comment for dvc.yaml."""
    needs: Need | None = None
    """What an experiment must define for Snakemake to plan this stage (:data:`NEEDS`); ``None``: always. DVC's
    graph is static: there the stage runs and writes a cheap "nothing to do" output."""
    reads_if: tuple[tuple[str, Need], ...] = ()
    """Snakemake only: ``(dep, need)``, a dep read only where the experiment defines ``need``."""
    picks: tuple[tuple[str, Pick], ...] = ()
    """Snakemake only: ``(dep, pick)`` for a dep folder of a repeated stage's outputs of which the stage reads some
    jobs only: ``pick(experiment, job)`` (the experiment's params.yaml mapping) says which, so the job need not wait
    for the others (DVC depends on the whole folder)."""
    threads: int | tuple[str, int] = 1
    """Snakemake threads: a number, or ``(section.key, default)`` read from the job's experiment."""
    job: Job = "cpu"
    """Snakemake resources: ``cpu`` none, ``gpu`` one GPU, ``train`` / ``lm_train``
    :func:`lsnmt.runner.launch.job_resources` of params.yaml's ``train`` / ``xelm`` section."""
    local: bool = False
    """Snakemake runs the job on the submitting host (``localrule``), not as a cluster job."""
    view: type | None = None
    """The stage's view of params.yaml (:mod:`lsnmt.view`), whose keys are :attr:`params` (:func:`viewed`)."""

    @property
    def cmd(self) -> str:
        """The shell command, with wildcards (both front ends run exactly this)."""
        exp = " --experiment {exp}" if self.per_experiment else ""
        each = f" --{self.each} {{{self.each}}}" if self.each else ""
        return f"python -m stages.{self.name}{exp}{each} --log {self.log}"


def viewed(view: type, **kwargs: Any) -> Stage:
    """A stage that reads ``view``: its params are the view's keys, by construction."""
    return Stage(params=keys(view), view=view, **kwargs)


def _outs(*paths: str) -> tuple[Out, ...]:
    return tuple(Out(p) for p in paths)


def _lm(name: str, deps: tuple[str, ...], out: Out | tuple[Out, ...], each: str | None = None,
        jobs: tuple[str, ...] = (), params: tuple[str, ...] = ("lm_data", "xelm"), job: Job = "gpu",
        picks: tuple[tuple[str, Pick], ...] = (), view: type | None = None) -> Stage:
    """An x-elm stage after ``lm_data`` (x-elm Sec. 3-7): one GPU unless ``job`` says otherwise; on ``view``, its
    keys are the params."""
    log = f"logs/{{exp}}/xelm/{name}/{{{each}}}.log" if each else f"logs/{{exp}}/xelm/{name}.log"
    outs = out if isinstance(out, tuple) else (out,)
    return Stage(name=name, log=log, deps=(P.LM, *deps), outs=outs, params=keys(view) if view else params, jobs=jobs,
                 each=each, needs="xelm", job=job, picks=picks, view=view)


def _metrics(stage: str) -> tuple[Out]:
    """An evaluation stage's DVC metrics: a folder of one file per system (and test set or task), which
    ``dvc metrics show`` prints as one row each (``lsnmt/eval/metrics.py``)."""
    return (Out(P.METRICS.replace("{stage}", stage), "metrics"),)


STAGES: tuple[Stage, ...] = (
    viewed(DownloadView, name="download", log="logs/{exp}/download.log", deps=(P.EMBEDDED,), outs=_outs(P.RAW),
           local=True, note="evaluate.metrics: a FLORES-200 spBLEU metric makes download fetch sacreBLEU's "
                            "SentencePiece model"),
    viewed(PrepareView, name="prepare", log="logs/{exp}/prepare.log", deps=(P.RAW,), outs=_outs(P.PREPARED)),
    viewed(SampleView, name="sample", log="logs/{exp}/sample.log", deps=(P.PREPARED, P.SPM), outs=_outs(P.SAMPLED),
           note="after spm: sample.max_piece_ratio counts SentencePiece pieces (lsnmt/data/clean.py)"),
    viewed(SpmView, name="spm", log="logs/{exp}/spm.log", deps=(P.PREPARED,), outs=_outs(P.SPM),
           threads=("spm.threads", 2)),
    viewed(EncodeView, name="encode", log="logs/{exp}/encode.log", deps=(P.SPM, P.SAMPLED, P.PREPARED),
           outs=_outs(P.BIN), threads=("encode.workers", 2)),
    viewed(SearchView, name="search", log="logs/{exp}/search.log", deps=(P.BIN,), outs=_outs(P.SEARCH),
           needs="search", threads=("train.cpu_threads", 2), job="gpu"),
    viewed(TrainView, name="train", log="logs/{exp}/train/{method}.log", each="method",
           deps=(P.BIN, P.SEARCH),
           outs=(Out(P.MODEL),
                 Out(P.CURVE, "plots", xy=("step", "loss")), Out(P.CURVE_IMAGE, "plots"), Out(P.TRAIN_RECORD)),
           needs="translation", threads=("train.cpu_threads", 2), job="train"),
    viewed(TranslateView, name="translate", log="logs/{exp}/translate/{method}.log", each="method",
           deps=(P.MODEL, P.SPM, P.BIN), outs=_outs(P.TRANSLATE),
           note="every system of the method (lsnmt/methods/__init__.py): FD / LMS+FD's other route in "
                "translate/<method>/<route>, a CLM top-w sweep point (sweep_top_w, CLM Figure 4) in "
                "translate/<method>/w<w>",
           needs="translation", threads=("decode.cpu_threads", 2), job="gpu"),
    viewed(EvaluateView, name="evaluate", log="logs/{exp}/evaluate.log",
           deps=(P.TRANSLATED, P.TRAINED, P.PREPARED, P.SPM, P.BIN),
           outs=(Out(P.EVALUATE, cache=False), *_metrics("evaluate")), jobs=("methods",), needs="translation",
           threads=("evaluate.cpu_threads", 2)),
    viewed(TaskPrepView, name="task_prep", log="logs/{exp}/task_prep.log", deps=(P.EMBEDDED,),
           outs=_outs(P.TASK_RAW, P.TASK_DATA), jobs=("tasks",), needs="tasks", local=True,
           note="fetches the tasks' datasets (download reads no task setting) and prepares them"),
    viewed(TaskTrainView, name="task_train", log="logs/{exp}/task_train.log", deps=(P.TASK_DATA,),
           outs=_outs(P.TASKS), jobs=("tasks", "task_methods"), needs="tasks", threads=2, job="gpu"),
    viewed(TaskEvalView, name="task_eval", log="logs/{exp}/task_eval.log", deps=(P.TASKS, P.TASK_DATA),
           outs=(Out(P.TASK_EVAL, cache=False), *_metrics("task_eval")), jobs=("tasks", "task_methods"),
           needs="tasks", local=True),
    Stage(name="params", log="logs/params.log", per_experiment=False, deps=(P.PAPER,),
          outs=(Out(P.PARAMS_CSV, cache=False),),
          linked=("data", "spm", "model", "method_cfg", "task_cfg", "task_method_cfg"),
          note="the papers' #params columns, counted from the experiments reports/paper/counts.yaml links",
          local=True),
    viewed(ClaimView, name="claim", log="logs/{exp}/claim.log", outs=(Out(P.CLAIM), *_metrics("claim")),
          note="ours only: the papers' central claim at small scale (lsnmt/claim/); without a `claim` section: "
               "\"not configured\"",
          needs="claim", threads=("claim.cpu_threads", 1)),
    viewed(LMDataView, name="lm_data", log="logs/{exp}/xelm/lm_data.log", deps=(P.PREPARED, P.SPM), outs=_outs(P.LM),
           note="x-elm (lsnmt/xelm/); an experiment without x-elm sections gets status.json \"not configured\" in "
                "each folder",
           needs="xelm"),
    _lm("cluster", (), Out(P.CLUSTER), job="cpu", view=XelmView),
    _lm("lm_seed", (), Out(P.SEED), job="lm_train", view=LMTrainView),
    _lm("lm_expert", (P.CLUSTER, P.SEED), Out(P.EXPERT), each="expert",
        jobs=("xelm_experts",), job="lm_train", view=XelmView),
    _lm("lm_hmr", (P.CLUSTER, P.EXPERTS), Out(P.HMR), each="target",
        jobs=("xelm_targets",), picks=((P.EXPERTS, main_typology_expert),), job="lm_train",
        view=LMTrainView),
    _lm("lm_lapt", (P.CLUSTER, P.EXPERTS), Out(P.LAPT),
        picks=((P.EXPERTS, dense_expert),), job="lm_train", view=LMTrainView),
    _lm("lm_eval", (P.CLUSTER, P.SEED, P.EXPERTS, P.HMRS, P.LAPT),
        (Out(P.LM_EVAL, cache=False), *_metrics("lm_eval")), jobs=("xelm_experts", "xelm_targets"), view=XelmView),
    _lm("lm_icl", (P.CLUSTER, P.SEED, P.EXPERTS),
        (Out(P.ICL, cache=False), *_metrics("lm_icl")), jobs=("xelm_experts",), view=IclView),
    Stage(name="report", log="logs/{exp}/report.log",
          deps=(P.EVALUATE, P.TASK_EVAL, P.PREPARED, P.PARAMS_CSV,
                P.PAPER, P.SEARCH, P.LM_EVAL, P.ICL, P.CLAIM),
          outs=(Out("reports/README.md", cache=False,
                    report={"category": "Index", "caption": "reports/workflow.rst"}),
                Out("reports/index.html", cache=False), Out("reports/tables", cache=False),
                Out("reports/figures", cache=False,
                    report={"patterns": ["{paper}/{name}.png"], "category": "Figures", "subcategory": "{paper}",
                            "labels": {"paper": "{paper}", "figure": "{name}"}})),
          params=("description", "data", "model", "train", "evaluate", "method_cfg", "task_cfg", "task_method_cfg",
                  "lm_data", "xelm"),
          jobs=("methods",), reads_if=((P.PREPARED, "translation"),), local=True,
          note="every experiment of the run (Snakemake: all of a paper's with --config paper=P)"),
)

BY_NAME = {s.name: s for s in STAGES}


COUNTS = Path(__file__).resolve().parents[2] / "reports" / "paper" / "counts.yaml"
"""The papers' #params rows and the experiments they count (:mod:`lsnmt.report.paper_counts` reads the rest)."""


def linked_experiments(defined: Iterable[str], counts: Path = COUNTS) -> list[str]:
    """The experiments ``counts.yaml`` links (a group's or a row's ``experiment``) that ``defined`` holds, in order
    of first mention. A trimmed params.yaml (the tests' tiny one) defines none of them."""
    groups: list[dict[str, Any]] = load_yaml(counts).get("groups") or []
    named = [g.get("experiment") for g in groups] + [r.get("experiment") for g in groups for r in g.get("rows") or []]
    have = set(defined)
    return [e for e in dict.fromkeys(named) if e in have]


def linked_keys(stage: Stage, defined: Iterable[str]) -> list[str]:
    """``experiments.<e>.<section>`` for each of ``stage.linked`` and each linked experiment ``defined`` holds: the
    params stage reruns when a paper configuration it counts changes, not on a decoding or training edit."""
    if not stage.linked:
        return []
    return [f"experiments.{e}.{s}" for e in linked_experiments(defined) for s in stage.linked]
