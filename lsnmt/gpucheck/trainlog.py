"""What a training's log says about its speed: when its updates began, the time of each logged step, where it
stopped; the first ``n`` updates' time, its steady rate, and several trainings' combined rate.

The train stage logs ``<date> <time>,<ms> INFO ...: train: <parameters>, ..., <N> updates of ...`` just before its
first update (``lsnmt.train.announce``), one ``step <k>/<N> | ...`` line every ``train.log_every`` updates
(``lsnmt.train.curve.log_line``) and, stopped by a signal, ``stopped by SIGTERM after update <k>``
(``lsnmt.stops.Interrupted``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")
START = re.compile(r"train: [\d,]+ parameters .* updates of .*?(?:resuming at update ([\d,]+))?, device")
STEP = re.compile(r"\bstep (\d+)/(\d+) \|")
STOPPED = re.compile(r"stopped by SIG\w+ after update (\d+)")


@dataclass
class TrainLog:
    """One training's log: ``start`` (seconds, the start line's time) at update ``first``, ``points`` ``(seconds,
    step)`` of the step lines, ``total`` updates planned, ``stopped`` the update a signal stopped it after."""

    start: float | None = None
    first: int = 0
    points: list[tuple[float, int]] = field(default_factory=list)
    total: int | None = None
    stopped: int | None = None

    @property
    def reached(self) -> int:
        """The last update done (saved, when it was stopped)."""
        if self.stopped is not None:
            return self.stopped
        return self.points[-1][1] if self.points else self.first


def parse(text: str) -> TrainLog:
    log = TrainLog()
    for line in text.splitlines():
        stamp = STAMP.match(line)
        if not stamp:
            continue
        t = datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        if m := START.search(line):
            log.start, log.first, log.points = t, int((m.group(1) or "0").replace(",", "")), []
        elif m := STEP.search(line):
            log.points.append((t, int(m.group(1))))
            log.total = int(m.group(2))
        elif m := STOPPED.search(line):
            log.stopped = int(m.group(1))
    return log


def read(path: Path) -> TrainLog:
    return parse(path.read_text(encoding="utf-8", errors="replace")) if path.is_file() else TrainLog()


def first_updates(log: TrainLog, n: int) -> float | None:
    """Seconds from the start line to the first step line at or past update ``first + n`` (None: not logged)."""
    at = next((t for t, s in log.points if s >= log.first + n), None)
    return None if at is None or log.start is None else at - log.start


def rate(log: TrainLog, after: int = 0) -> float | None:
    """Updates per second from the first step line at or past update ``first + after`` to the last one."""
    late = [(t, s) for t, s in log.points if s >= log.first + after]
    if len(late) < 2 or late[-1][0] <= late[0][0]:
        return None
    return (late[-1][1] - late[0][1]) / (late[-1][0] - late[0][0])


def _step_at(points: Sequence[tuple[float, int]], t: float) -> float:
    """The update count at time ``t`` (linear between step lines; ``t`` within them)."""
    for (t0, s0), (t1, s1) in zip(points, points[1:], strict=False):
        if t0 <= t <= t1:
            return s0 + (s1 - s0) * (t - t0) / (t1 - t0) if t1 > t0 else float(s1)
    return float(points[-1][1])


def combined(logs: Sequence[TrainLog]) -> tuple[float, float, int] | None:
    """``(updates/s, window seconds, trainings)``: the updates of all trainings that logged at least twice, over the
    window in which all of them were between their first and last step lines (None: no such window)."""
    running = [g.points for g in logs if len(g.points) >= 2]
    if not running:
        return None
    a, b = max(p[0][0] for p in running), min(p[-1][0] for p in running)
    if b <= a:
        return None
    done = sum(_step_at(p, b) - _step_at(p, a) for p in running)
    return done / (b - a), b - a, len(running)
