"""Warm-up until the timings settle, and a deadline shared out: what makes a benchmark mean the same on a GPU and a CPU.

On a GPU the first updates of a model pay one-off costs (CUDA context, cuBLAS heuristics and workspaces, the
caching allocator growing, ``torch.compile``): two warm-up updates were not enough there (issue 38: the first
method timed, naive, 811.9 ms per update, then LMS 74.6 ms). :func:`warm_up` runs single updates until two
successive ones agree within 10% (at least 5), or until its time is up (then ``settled`` is False and says so).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MIN_UPDATES = 5
TOLERANCE = 0.10


@dataclass(frozen=True)
class WarmUp:
    updates: int
    """Warm-up updates run."""
    settled: bool
    """Whether the last two agreed within the tolerance (False: the warm-up ran out of time)."""
    last: float
    """Seconds of the last warm-up update (a first estimate of one update's time)."""


def warm_up(
    update: Callable[[], float], seconds: float, *, min_updates: int = MIN_UPDATES, tolerance: float = TOLERANCE
) -> WarmUp:
    """Run ``update()`` (one update, returns its seconds, device synchronised) until two successive timings agree
    within ``tolerance`` of the larger and at least ``min_updates`` ran, or ``seconds`` have passed (after
    ``min_updates`` at least, so that every figure is taken after the same minimum warm-up)."""
    start, times = time.perf_counter(), [update()]
    while True:
        n = len(times)
        settled = n >= min_updates and abs(times[-1] - times[-2]) <= tolerance * max(times[-1], times[-2])
        if settled or (n >= min_updates and time.perf_counter() - start >= seconds):
            return WarmUp(n, settled, times[-1])
        times.append(update())


class Deadline:
    """A global deadline shared out between the items still to run: each gets an equal share of what is left."""

    def __init__(self, seconds: float, items: int) -> None:
        self.end, self.left = time.perf_counter() + seconds, items

    def remaining(self) -> float:
        return self.end - time.perf_counter()

    def share(self) -> float:
        """The next item's budget (seconds; <= 0 once the deadline has passed); counts the item as started."""
        budget = self.remaining() / max(self.left, 1)
        self.left -= 1
        return budget


def fitting(wanted: int, seconds_each: float, seconds: float) -> int:
    """How many of ``wanted`` timed updates fit in ``seconds`` at ``seconds_each`` (at least 1)."""
    return max(1, min(wanted, int(seconds / max(seconds_each, 1e-9))))
