"""The Snakefile's rules, made from the stage table (:mod:`lsnmt.graph.stages`) as dvc.yaml is: the Snakefile loops
over :data:`~lsnmt.graph.stages.STAGES` and asks :class:`Rules` for each rule's inputs, log, command, threads and
resources, so adding a stage is one table row plus its ``stages/<name>.py``.

Snakemake reruns a job when its ``params`` differ from the last run's (trigger ``params``) or an input is newer
(``mtime``), so a rule's params are the same keys dvc.yaml tracks, looked up for the job's own experiment and
method (:func:`params`), and its code inputs are the files its stage module imports (:func:`code`).

Where DVC's graph is static (a stage reads a whole folder, ``results/{exp}/train``, and runs whether or not the
experiment defines it), Snakemake's is per job: a dep that is the parent folder of a repeated stage's outputs reads
those outputs over the experiment's job list (evaluate reads ``results/{exp}/translate/{method}`` for each method),
and a stage the experiment does not define (:attr:`~lsnmt.graph.stages.Stage.needs`: no ``search`` section, no
tasks, no ``xelm``) plans no job. Only params.yaml's own ``experiment``, the one ``dvc commit`` records after a
Snakemake run, still runs its search, task and claim stages (they write "nothing to do" outputs, as under DVC).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsnmt.graph.imports import module_files
from lsnmt.graph.stages import BY_NAME, EACH, STAGES, Need, Stage, linked_experiments

TRAIN_RESOURCES = ("gpu", "nodes", "mpi", "tasks", "tasks_per_gpu")
"""The resources of a training job (:func:`lsnmt.runner.launch.job_resources`), read by the SLURM plugin."""
WORLD_SECTION = {"train": "train", "lm_train": "xelm"}
"""Job kind -> the params.yaml section whose ``gpus_per_node`` and ``nodes`` size its DDP world."""

PRODUCER = {o.path: s for s in STAGES for o in s.outs}
"""Output path pattern -> the stage that writes it."""

NAME_WILDCARD = r"[A-Za-z0-9](?:(?!\.\.)[A-Za-z0-9_.-]){0,99}"
"""Every wildcard's ``wildcard_constraints``: :data:`lsnmt.typed.NAME_PATTERN` without ``..``. Snakemake writes
wildcards into the rules' shell commands as they are, and a requested path fixes them
(``snakemake 'results/default/train/x$(touch PWNED)/model.pt'`` ran ``touch PWNED``): a path whose wildcard is not
a name matches no rule."""


def code(name: str) -> list[str]:
    """The repository files ``stages.<name>`` imports (rule inputs)."""
    return list(module_files(f"stages.{name}"))


def lookup(section: Mapping[str, Any], key: str) -> Any:
    """``section[a][b]…`` for dotted ``key``; ``None`` where a level is missing."""
    value: Any = section
    for part in key.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def fixed(stage: Stage) -> bool:
    """A per-experiment stage whose outputs carry no ``{exp}`` (the report): it runs for the run's experiment."""
    return stage.per_experiment and not any("{exp}" in o.path for o in stage.outs)


@dataclass(frozen=True)
class Rules:
    """The rules of one Snakemake run. ``experiments``: params.yaml's ``experiments`` (raw); ``jobs_of(exp, key)``:
    an experiment's job list (:meth:`lsnmt.experiment.params.Params.jobs_of`); ``selected``: the run's experiment;
    ``recorded``: params.yaml's ``experiment`` (DVC's); ``targets``: the experiments the run makes;
    ``train_job(exp, section)``: the resources of a training job of ``exp`` sized by params.yaml section
    ``section`` (:data:`WORLD_SECTION`)."""

    experiments: Mapping[str, Any]
    jobs_of: Callable[[str, str], Sequence[str]]
    selected: str
    recorded: str
    targets: Sequence[str]
    train_job: Callable[[str, str], Mapping[str, Any]]

    def defines(self, need: Need, exp: str) -> bool:
        """Whether experiment ``exp`` defines ``need`` (:data:`lsnmt.graph.stages.NEEDS`)."""
        cfg = self.experiments[exp]
        if need == "translation":
            directions = lookup(cfg, "data.train_directions") or "en-centric"
            return bool(self.jobs_of(exp, "methods")) and directions != "none"
        if need == "xelm":
            return bool(cfg.get("xelm"))
        if exp == self.recorded:  # dvc commit records every output of dvc.yaml's graph
            return True
        return bool(self.jobs_of(exp, "tasks") if need == "tasks" else cfg.get(need))

    def planned(self, stage: Stage, exp: str) -> bool:
        return stage.needs is None or self.defines(stage.needs, exp)

    def _dep(self, stage: Stage, dep: str, wild: dict[str, str]) -> list[str]:
        """The inputs dep pattern ``dep`` of ``stage`` stands for in the job with wildcards ``wild``."""
        exp = wild["exp"]
        need = dict(stage.reads_if).get(dep)
        if need and not self.defines(need, exp):
            return []
        if dep in PRODUCER:
            return [dep.format_map(wild)] if self.planned(PRODUCER[dep], exp) else []
        below = [(s, o) for s in STAGES if self.planned(s, exp) for o in s.outs if _under(o.path, dep)]
        if not below and not any(_under(p, dep) for p in PRODUCER):
            return [dep.format_map(wild)]  # not written by a stage (embedded, reports/paper)
        pick = dict(stage.picks).get(dep, lambda cfg, job: True)
        return [o.path.format_map({**wild, s.each: j} if s.each else wild) for s, o in below
                for j in (self.jobs_of(exp, EACH[s.each]) if s.each else ("",)) if pick(self.experiments[exp], j)]

    def inputs(self, stage: Stage) -> Callable[[Any], list[str]]:
        """The data inputs of a job of ``stage`` (an input function of the wildcards)."""

        def get(w: Any) -> list[str]:
            wild = dict(w.items())
            exps = self.targets if fixed(stage) else [wild.get("exp", self.selected)]
            paths = [p for e in exps for d in stage.deps for p in self._dep(stage, d, {**wild, "exp": e})]
            return list(dict.fromkeys(paths))

        return get

    def final(self) -> list[str]:
        """Rule ``all``: each target experiment's own results, then the report's files.

        An experiment's results are the outputs of its planned stages that no stage of its own reads (evaluation,
        NER / QA, x-elm, the claim): the report, which reads them, writes files without ``{exp}`` that a run of
        another experiment (``./run.sh`` under DVC) has already made, so asking for the report alone plans nothing
        for ``--config experiment=X`` where X never ran."""
        read = [d for s in STAGES if not fixed(s) for d in s.deps]
        sinks = [s for s in STAGES if not any(o.path == d or _under(o.path, d) for o in s.outs for d in read)]
        paths = [o.path.format(exp=e) for s in sinks for e in self._exps(s) for o in s.outs]
        return list(dict.fromkeys(paths))

    def _exps(self, stage: Stage) -> list[str]:
        return [self.selected] if fixed(stage) else [e for e in self.targets if self.planned(stage, e)]

    def log(self, stage: Stage) -> str:
        return stage.log.replace("{exp}", self.selected) if fixed(stage) else stage.log

    def command(self, stage: Stage) -> Callable[[Any], str]:
        """The table's command of a job (a params function of the wildcards). The rule's ``shell:`` is
        ``{params.cmd}``: Snakemake evaluates a ``shell:`` expression when the job runs, after the Snakefile's loop
        over the stages has moved on, so a rule made in a loop must not name the loop variable there."""
        own = {"exp": self.selected} if fixed(stage) else {}
        return lambda w: stage.cmd.format_map({**dict(w.items()), **own})

    def threads(self, stage: Stage) -> int | Callable[[Any], int]:
        if isinstance(stage.threads, int):
            return stage.threads
        key, default = stage.threads
        return lambda w: int(lookup(self.experiments[w.exp], key) or default)

    def resources(self, stage: Stage) -> dict[str, Any]:
        if stage.job == "gpu":
            return {"gpu": 1}
        if stage.job in WORLD_SECTION:
            section = WORLD_SECTION[stage.job]
            return {k: (lambda w, k=k: self.train_job(w.exp, section).get(k)) for k in TRAIN_RESOURCES}
        return {}


def params(name: str, experiments: Mapping[str, Any], jobs_of: Callable[[str, str], Sequence[str]],
           selected: str) -> dict[str, Callable[[Any], Any]]:
    """Rule params of stage ``name``: ``{section: value}`` per tracked key, ``{list: jobs}`` per job list, and
    ``{linked_<e>: {section: value}}`` per linked experiment (the params stage:
    :func:`~lsnmt.graph.stages.linked_keys`).
    ``selected``: the experiment of a rule without an ``{exp}`` wildcard (the report)."""
    stage = BY_NAME[name]

    def exp_of(w: Any) -> str:
        return dict(w.items()).get("exp", selected)

    def section(key: str) -> Callable[[Any], Any]:
        return lambda w: lookup(experiments[exp_of(w)], key.format_map(dict(w.items())))

    def jobs(key: str) -> Callable[[Any], Any]:
        return lambda w: list(jobs_of(exp_of(w), key))

    out = {key.split(".")[0]: section(key) for key in stage.params}
    out.update({key: jobs(key) for key in stage.jobs})
    for e in linked_experiments(experiments) if stage.linked else ():
        out[f"linked_{e}"] = _constant({s: lookup(experiments[e], s) for s in stage.linked})
    return out


def _under(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def _constant(value: Any) -> Callable[[Any], Any]:
    return lambda w: value
