"""What a stage prints on the console: its start and end, progress, and each kind of warning once.

A stage logs everything to its log file (``--log``), but the console (stderr, which DVC and Snakemake show)
gets only the lines a person watching the run needs:

* a start line and an end line with the stage's wall time (:func:`stage_clock`); under DVC the start line also
  says the stage's place in the run and the run's time left (``[12/41] train: start (default, naive); about 14 min
  left in all``, from :data:`STEP` and :data:`ETA`, which :mod:`lsnmt.graph.brief` sets);
* progress lines written with ``extra=CONSOLE`` (:mod:`lsnmt.runner.progress`, the training start line);
* warnings and errors, each kind (the same logger and message template) shown ``repeat`` times; at the stage's
  end one line counts the ones held back, naming the stage's log file ("33 more warning(s) like '...' (see
  logs/default/translate/naive.log)").

``LSNMT_VERBOSE=1`` shows every line on the console too (the log file always has them). Python's ``warnings``
are routed through logging (``py.warnings``), so a library's deprecation warning is counted like the others.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

CONSOLE = {"console": True}
"""``log.info(..., extra=CONSOLE)``: this INFO line also goes to the console."""
REPEAT = 1
"""How many warnings of one kind the console shows before it only counts them."""
STEP = "LSNMT_STEP"
"""Environment variable: the stage's place in the run, ``k/N`` (set by :mod:`lsnmt.graph.brief` under DVC)."""
ETA = "LSNMT_ETA"
"""Environment variable: the run's time left at the stage's start, ``about 14 min left`` (the same)."""


def verbose() -> bool:
    """``LSNMT_VERBOSE`` set to anything but ``0`` / empty: the console shows every log line."""
    return os.environ.get("LSNMT_VERBOSE", "") not in ("", "0")


class ConsoleFilter(logging.Filter):
    """Passes warnings and errors (each kind ``repeat`` times) and INFO lines marked ``console``; counts the
    warnings it holds back per kind (:meth:`held`)."""

    def __init__(self, repeat: int = REPEAT, everything: bool = False) -> None:
        super().__init__()
        self.repeat, self.everything = repeat, everything
        self.seen: Counter[tuple[str, str]] = Counter()
        self.first: dict[tuple[str, str], str] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        if record.levelno >= logging.WARNING:
            kind = (record.name, str(record.msg))
            self.seen[kind] += 1
            self.first.setdefault(kind, record.getMessage())
            return self.everything or self.seen[kind] <= self.repeat
        return self.everything or bool(getattr(record, "console", False))

    def held(self, log_file: str | None = None) -> list[str]:
        """One line per kind of warning shown fewer times than it occurred, naming ``log_file`` where they are."""
        lines = []
        for kind, n in self.seen.items():
            if n > self.repeat and not self.everything:
                first = self.first[kind]
                first = first if len(first) <= 100 else first[:97] + "..."
                lines.append(f"{n - self.repeat} more warning(s) like '{first}' (see {log_file or 'the log'})")
        return lines


def console_handler(stream) -> logging.Handler:
    """The stderr handler with its :class:`ConsoleFilter` (``LSNMT_VERBOSE`` lets every line through)."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(ConsoleFilter(everything=verbose()))
    return handler


def _filters() -> list[ConsoleFilter]:
    return [f for h in logging.getLogger().handlers for f in h.filters if isinstance(f, ConsoleFilter)]


def log_file() -> str | None:
    """The stage's log file (its :class:`logging.FileHandler`), relative to the working directory where it lies
    below it."""
    for h in logging.getLogger().handlers:
        if isinstance(h, logging.FileHandler):
            path = os.path.abspath(h.baseFilename)
            return os.path.relpath(path) if path.startswith(os.getcwd() + os.sep) else path
    return None


def place() -> tuple[str, str]:
    """``("[12/41] ", "; about 14 min left in all")`` under DVC (:data:`STEP`, :data:`ETA`), else empty."""
    step, eta = os.environ.get(STEP, ""), os.environ.get(ETA, "")
    return (f"[{step}] " if step else "", f"; {eta} in all" if eta else "")


@contextmanager
def stage_clock(name: str, detail: str = "") -> Iterator[None]:
    """Log ``<name>: start`` and ``<name>: done in N s`` (or ``failed after N s``) on the console, then one line
    per kind of warning the console held back."""
    log = logging.getLogger(f"stages.{name}")
    step, eta = place()
    log.info("%s%s: start%s%s", step, name, f" ({detail})" if detail else "", eta, extra=CONSOLE)
    start = time.perf_counter()
    ok = False
    try:
        yield
        ok = True
    finally:
        took = time.perf_counter() - start
        for f in _filters():
            for line in f.held(log_file()):
                log.warning(line)  # the line itself as the template: each kind its own
        log.info("%s%s: %s %.0f s", step, name, "done in" if ok else "failed after", took, extra=CONSOLE)
