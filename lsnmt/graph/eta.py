"""The DVC path's place and overall ETA (:mod:`lsnmt.graph.brief`): ``[k/N]`` and how long the stages left in
DVC's plan will take.

A stage's expected seconds come from the last run on this machine (:data:`HISTORY`, written as stages finish, in
DVC's own Git-ignored scratch folder); for a stage never timed here, from this run's jobs of the same stage
(``lm_expert@...``: the median of those done) or else from :data:`PRIOR`, the default's seconds of work per stage
on 2 idle CPU cores (docs/default_run.md), fitted to this run as ``a + b * prior``: ``a`` a stage's fixed cost here
(the median of the small stages' seconds: DVC's bookkeeping, Python's start and imports) and ``b`` this machine's
speed on the rest (the big stages' seconds beyond ``a`` per prior second). It is an estimate ("about 14 min
left"); a stage DVC will skip as up to date is counted as if it ran.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from lsnmt.io import atomic_write

HISTORY = Path(".dvc/tmp/lsnmt-stage-seconds.json")
"""``{stage addressing: seconds}`` of each stage's last run here, start to the next stage's start (DVC's
bookkeeping and the next Python start included)."""
OVERHEAD = 4.0
"""Seconds around a stage beyond its own work before any is measured: DVC's hashing and lock file, Python's start
(docs/default_run.md)."""
SMALL = 10
"""A stage whose prior work is at most this many seconds is mostly fixed cost (:meth:`Clock.fit`)."""
PRIOR = {
    "download": 3, "prepare": 5, "sample": 4, "spm": 5, "encode": 3, "search": 30, "train": 65, "translate": 70,
    "evaluate": 27, "task_prep": 5, "task_train": 10, "task_eval": 4, "params": 29, "claim": 735, "lm_data": 10,
    "cluster": 8, "lm_seed": 15, "lm_expert": 5, "lm_hmr": 6, "lm_lapt": 6, "lm_eval": 12, "lm_icl": 5, "report": 8,
}  # fmt: skip
"""Seconds of each stage's own work on the default, 2 idle CPU cores (docs/default_run.md's table; the x-elm
branch's 127 s shared out over its stages): the shape of a first run's ETA, scaled to the machine as it goes."""


def base(name: str) -> str:
    """The stage of a job: ``train`` of ``train@naive``."""
    return name.split("@", 1)[0]


def prior(name: str) -> float:
    """The prior seconds of work of stage ``name`` (``train@naive``: ``train``'s)."""
    return float(PRIOR.get(base(name), statistics.median(PRIOR.values())))


def load(path: Path = HISTORY) -> dict[str, float]:
    """The last run's seconds per stage; none where the file is missing or unreadable (an estimate, never a
    failure)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))} if isinstance(data, dict) else {}


@dataclass
class Clock:
    """DVC's plan (stage addressings in order) and what is known of each stage's seconds."""

    plan: list[str]
    history: dict[str, float] = field(default_factory=dict)
    measured: dict[str, float] = field(default_factory=dict)
    """Seconds of the stages run so far in this run."""

    def fit(self) -> tuple[float, float]:
        """``(a, b)`` of ``seconds = a + b * prior`` over the stages this run timed that have no history: ``a`` the
        median seconds of the small ones (:data:`SMALL`), ``b`` the big ones' seconds beyond ``a`` per prior
        second; ``(OVERHEAD, 1)`` before any."""
        timed = [(prior(n), s) for n, s in self.measured.items() if n not in self.history]
        small = [s for p, s in timed if p <= SMALL]
        a = statistics.median(small) if small else OVERHEAD
        big = [(p, s) for p, s in timed if p > SMALL]
        b = sum(max(s - a, 0.0) for _, s in big) / sum(p for p, _ in big) if big else 1.0
        return a, min(20.0, max(0.05, b))

    def expected(self, name: str) -> float:
        """Stage ``name``'s seconds: its last run's, its siblings' in this run, or the fitted prior."""
        if name in self.history:
            return self.history[name]
        same = [s for n, s in self.measured.items() if base(n) == base(name) and n not in self.history]
        if same:
            return statistics.median(same)
        a, b = self.fit()
        return a + b * prior(name)

    def left(self, name: str) -> float:
        """Seconds from the start of stage ``name`` to the end of the plan."""
        rest = self.plan[self.plan.index(name) :] if name in self.plan else [name]
        return sum(self.expected(n) for n in rest)

    def step(self, name: str) -> str:
        """``k/N``: the place of stage ``name`` in the plan."""
        k = self.plan.index(name) + 1 if name in self.plan else len(self.measured) + 1
        return f"{k}/{max(len(self.plan), k)}"

    def finished(self, name: str, seconds: float, path: Path = HISTORY) -> None:
        """Record that stage ``name`` ran ``seconds``, here and in the history file (written atomically)."""
        self.measured[name] = seconds
        if path.parent.is_dir():
            with atomic_write(path) as f:
                json.dump({**load(path), name: round(seconds, 1)}, f, indent=0, sort_keys=True)


def minutes(seconds: float) -> str:
    """``about 14 min left`` / ``about 40 s left``."""
    return f"about {seconds / 60:.0f} min left" if seconds >= 90 else f"about {max(5, round(seconds, -1)):.0f} s left"
