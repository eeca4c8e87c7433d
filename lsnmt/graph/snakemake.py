"""What the Snakefile reads from the stage table: each rule's code inputs and its params (the rerun trigger).

Snakemake reruns a job when its ``params`` differ from the last run's (trigger ``params``) or an input is newer
(``mtime``), so a rule's params are the same keys dvc.yaml tracks (:mod:`lsnmt.graph.table`), looked up for the
job's own experiment and method, and its code inputs are the files its stage module imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lsnmt.graph.imports import module_files
from lsnmt.graph.table import BY_NAME, linked_experiments

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


def params(name: str, experiments: Mapping[str, Any], jobs_of: Callable[[str, str], list[str]],
           selected: str) -> dict[str, Callable[[Any], Any]]:
    """Rule params of stage ``name``: ``{section: value}`` per tracked key, ``{list: jobs}`` per job list, and
    ``{linked_<e>: {section: value}}`` per linked experiment (the params stage: :func:`~lsnmt.graph.table.linked_keys`).
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


def _constant(value: Any) -> Callable[[Any], Any]:
    return lambda w: value
