"""The stages the check runs, in the order the pipeline's stage table implies (:data:`lsnmt.graph.stages.STAGES`).

The table lists stages in reading order, not in the order they can run (``sample`` is listed before ``spm``, whose
model it reads: ``sample.max_piece_ratio``). The order here follows the table's own ``deps`` and ``outs``: a stage
runs once every stage whose output it reads has run (ties in table order), so a new or moved dependency moves the
check with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from lsnmt.graph.stages import BY_NAME, STAGES, Stage


def _under(path: str, folder: str) -> bool:
    return path == folder or PurePosixPath(folder) in PurePosixPath(path).parents


def producers(stage: Stage) -> list[Stage]:
    """The stages whose outputs ``stage`` reads (an output at, under or above one of its deps)."""
    return [
        s
        for s in STAGES
        if s is not stage and any(_under(o.path, d) or _under(d, o.path) for o in s.outs for d in stage.deps)
    ]


def planned(stage: Stage, exp: Mapping[str, Any]) -> bool:
    """Whether the experiment (params.yaml's raw mapping) runs ``stage``: what it needs
    (:attr:`~lsnmt.graph.stages.Stage.needs`) is there; ``translation`` is assumed (the check trains)."""
    return stage.needs in (None, "translation") or bool(exp.get(stage.needs))


def stages_for(target: str, exp: Mapping[str, Any]) -> list[Stage]:
    """``target`` and every planned stage it reads from, directly or not, in an order they can run in."""
    needed: dict[str, Stage] = {}
    todo = [BY_NAME[target]]
    while todo:
        stage = todo.pop()
        if stage.name not in needed and planned(stage, exp):
            needed[stage.name] = stage
            todo += producers(stage)
    return ordered(list(needed.values()))


def ordered(stages: list[Stage]) -> list[Stage]:
    """``stages`` so that each comes after those of them it reads from (Kahn's algorithm, ties in table order)."""
    rank = {s.name: i for i, s in enumerate(STAGES)}
    left = sorted(stages, key=lambda s: rank[s.name])
    names = {s.name for s in stages}
    done: list[Stage] = []
    while left:
        ready = next(
            (s for s in left if all(p.name in {d.name for d in done} or p.name not in names for p in producers(s))),
            None,
        )
        if ready is None:
            raise ValueError(f"the stage table has a cycle among {[s.name for s in left]}")
        done.append(ready)
        left.remove(ready)
    return done
