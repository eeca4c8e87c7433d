"""What a stage prints on the console: its start and end, progress, and each kind of warning once.

A stage logs everything to its log file (``--log``), but the console (stderr, which DVC and Snakemake show)
gets only the lines a person watching the run needs:

* a start line and an end line with the stage's wall time (:func:`stage_clock`);
* progress lines written with ``extra=CONSOLE`` (:mod:`lsnmt.runner.progress`, the training start line);
* warnings and errors, each kind (the same logger and message template) shown ``repeat`` times; at the stage's
  end one line counts the ones held back ("... 33 more like it: see the log").

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

    def held(self) -> list[str]:
        """One line per kind of warning shown fewer times than it occurred."""
        lines = []
        for kind, n in self.seen.items():
            if n > self.repeat and not self.everything:
                first = self.first[kind]
                first = first if len(first) <= 100 else first[:97] + "..."
                lines.append(f"{n - self.repeat} more warning(s) like '{first}' (see the log)")
        return lines


def console_handler(stream) -> logging.Handler:
    """The stderr handler with its :class:`ConsoleFilter` (``LSNMT_VERBOSE`` lets every line through)."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(ConsoleFilter(everything=verbose()))
    return handler


def _filters() -> list[ConsoleFilter]:
    return [f for h in logging.getLogger().handlers for f in h.filters if isinstance(f, ConsoleFilter)]


@contextmanager
def stage_clock(name: str, detail: str = "") -> Iterator[None]:
    """Log ``<name>: start`` and ``<name>: done in N s`` (or ``failed after N s``) on the console, then one line
    per kind of warning the console held back."""
    log = logging.getLogger(f"stages.{name}")
    log.info("%s: start%s", name, f" ({detail})" if detail else "", extra=CONSOLE)
    start = time.perf_counter()
    ok = False
    try:
        yield
        ok = True
    finally:
        took = time.perf_counter() - start
        for f in _filters():
            for line in f.held():
                log.warning(line)  # the line itself as the template: each kind its own
        log.info("%s: %s %.0f s", name, "done in" if ok else "failed after", took, extra=CONSOLE)
