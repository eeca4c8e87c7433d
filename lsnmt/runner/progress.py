"""Progress of a long loop: a bar on a terminal, a log line at a fixed interval otherwise.

fairseq's ``--log-format`` picks ``tqdm`` on a terminal and ``simple`` (a plain line every ``--log-interval``
updates) when the output is a file; we do the same, with the interval in seconds so that a slow loop and a fast
one both report about equally often. Off a terminal (DVC, Snakemake, SLURM, a redirected ``./run.sh``) no
carriage-return bar is written, so log files hold whole lines only.

* :class:`Progress` ``(total, desc)``: ``update(n)``, ``close()``; a line ``desc: 120/200 update (60%), 2.1
  update/s, about 38 s left`` every ``interval`` seconds on the console (``extra=CONSOLE``,
  :mod:`lsnmt.runner.console`), and at most :data:`LINES` per loop of known length (a line also waits for
  ``1 / LINES`` of the total: on a loaded machine, where one update can take longer than the interval, a loop
  still writes a bounded log)
  and a closing line ``desc: 200/200 update in 95 s`` (to the log file only when no interval line was written:
  a short loop stays off the console).
* a loop inside another one (the claim stage's trainings inside its loop over jobs) writes its lines to the log
  file only: the console follows the outer loop (:func:`in_a_loop`; the training start line asks it too).
* :func:`progress` ``(iterable, desc)``: the same around an iterable.

``LSNMT_PROGRESS_SECONDS`` sets the interval (default 30 s); ``LSNMT_PROGRESS=bar|log`` forces the mode.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import weakref
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

from lsnmt.runner.console import CONSOLE

T = TypeVar("T")
LINES = 10
"""At most this many interval lines per loop of known length."""
INTERVAL = 30.0
"""Seconds between two progress lines off a terminal (``LSNMT_PROGRESS_SECONDS``)."""
log = logging.getLogger("lsnmt.runner.progress")
_OPEN: weakref.WeakSet[Progress] = weakref.WeakSet()
"""The reporting log-mode loops not yet closed (a loop never closed leaves with its object)."""


def in_a_loop() -> bool:
    """A reporting :class:`Progress` is open: what runs now is one item of its loop, so its lines go to the log
    file only."""
    return bool(_OPEN)


def on_terminal() -> bool:
    """A bar (stderr is a terminal, or ``LSNMT_PROGRESS=bar``), else log lines (``LSNMT_PROGRESS=log``)."""
    mode = os.environ.get("LSNMT_PROGRESS", "")
    if mode in ("bar", "log"):
        return mode == "bar"
    return sys.stderr.isatty()


def interval() -> float:
    """``LSNMT_PROGRESS_SECONDS`` as a positive number of seconds, else :data:`INTERVAL`."""
    raw = os.environ.get("LSNMT_PROGRESS_SECONDS", "")
    try:
        value = float(raw)
    except ValueError:
        return INTERVAL
    return value if value > 0 else INTERVAL


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


class Progress:
    """Counts ``update(n)`` towards ``total`` (``None``: unknown); see the module docstring. ``enabled=False``
    (a non-main rank) shows nothing."""

    def __init__(
        self,
        total: int | None,
        desc: str,
        unit: str = "it",
        initial: int = 0,
        logger: logging.Logger | None = None,
        enabled: bool = True,
        every: float | None = None,
    ) -> None:
        self.total, self.desc, self.unit, self.n, self.start_n = total, desc, unit, initial, initial
        self.log = logger or log
        self.enabled = enabled
        self.every = interval() if every is None else every
        self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit) if enabled and on_terminal() else None
        self.console = None if in_a_loop() else CONSOLE
        if enabled and self.bar is None:
            _OPEN.add(self)
        self.start = self.last = time.perf_counter()
        self.last_n = initial
        self.lines = 0

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.enabled and time.perf_counter() - self.last >= self.every and self._far_enough():
            self.last, self.last_n = time.perf_counter(), self.n
            self.lines += 1
            self.log.info("%s", self.line(), extra=self.console)

    def _far_enough(self) -> bool:
        """``1 / LINES`` of a known total done since the last line (always, for an unknown total)."""
        return self.total is None or (self.n - self.last_n) * LINES >= self.total

    def line(self) -> str:
        """``desc: n/total unit (p%), r unit/s, about t left``."""
        took = max(time.perf_counter() - self.start, 1e-9)
        rate = (self.n - self.start_n) / took
        if self.total is None:
            return f"{self.desc}: {self.n:,} {self.unit}, {rate:.3g} {self.unit}/s"
        left = f", about {_seconds((self.total - self.n) / rate)} left" if rate > 0 else ""
        pct = 100 * self.n / max(self.total, 1)
        return f"{self.desc}: {self.n:,}/{self.total:,} {self.unit} ({pct:.0f}%), {rate:.3g} {self.unit}/s{left}"

    def close(self) -> None:
        """Close the bar, or log the closing line (on the console when interval lines were written)."""
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            took = _seconds(time.perf_counter() - self.start)
            total = f"/{self.total:,}" if self.total is not None else ""
            self.log.info(
                "%s: %s%s %s in %s",
                self.desc,
                f"{self.n:,}",
                total,
                self.unit,
                took,
                extra=self.console if self.lines else None,
            )
        self.enabled = False
        _OPEN.discard(self)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(
    items: Iterable[T], desc: str, total: int | None = None, unit: str = "it", logger: logging.Logger | None = None
) -> Iterator[T]:
    """``items`` with a :class:`Progress` (``total`` defaults to ``len(items)`` where it has one)."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(total, desc, unit, logger=logger) as bar:
        for item in items:
            yield item
            bar.update()
