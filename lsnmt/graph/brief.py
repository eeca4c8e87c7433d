"""DVC with a brief console: ``python -m lsnmt.graph.brief repro [ARGS]`` runs ``dvc repro [ARGS]`` (any dvc
command line works: ``exp run -S ...``) and holds back DVC's per-stage chatter.

For each stage it runs, DVC prints "Running stage 'x':", each command of the stage after ``>`` (here the guard and
the stage), "Updating lock file 'dvc.lock'" and a blank line; for each stage it skips, "Stage 'x' didn't change,
skipping". A stage of this project prints its own start and end lines (:func:`lsnmt.runner.console.stage_clock`),
so those DVC lines say nothing new: on a default run they were 209 of the 495 lines from the first stage on. This
module runs DVC's own entry point (``dvc.cli.main``, what the ``dvc`` command runs) with a filter on the handlers of
DVC's loggers that drops exactly those INFO records, and ends (when DVC succeeds) with one line counting them::

    dvc repro: 41 stage(s) run, 0 up to date, in 23 min

It also says where the run is: before DVC starts a stage's command it sets ``LSNMT_STEP`` (``12/41``, the stage's
place in DVC's plan, skipped stages counted) and ``LSNMT_ETA`` (the whole run's time left, :mod:`lsnmt.graph.eta`),
which the stage's start line prints (:func:`lsnmt.runner.console.stage_clock`)::

    [12/41] train: start (default, naive); about 14 min left in all

Two of DVC's closing hints do not apply here and are dropped: "To enable auto staging" (the project turns
``core.autostage`` off in ``.dvc/config`` on purpose: a run's lock file is committed by hand, README "After a run")
and "Use `dvc push`" while no remote is configured. Everything else DVC writes passes: its warnings, its errors
("failed to reproduce 'train@lms'"), the hint to ``git add dvc.lock``, ``dvc exp run``'s experiment name. ``dvc -q``
is not the same: it hides DVC's errors too. The filter matches DVC's message templates (DVC 3.x); if a later DVC
words them differently, they are shown again, so nothing is ever lost. A stage's own output does not pass through
DVC's logging (the stage inherits the console), so it is untouched. ``dvc repro`` itself keeps DVC's full console.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from lsnmt.graph import eta
from lsnmt.runner.console import ETA, STEP

RAN = "Running stage '%s':"
SKIPPED = ("Stage '%s' didn't change, skipping", "'%s' didn't change, skipping")
LOCK = ("Updating lock file '%s'", "Generating lock file '%s'")
AUTOSTAGE = "\nTo enable auto staging, run:\n\n\tdvc config core.autostage true"
PUSH = "Use `dvc push` to send your updates to remote storage."
LOGGERS = ("dvc", "dvc_objects", "dvc_data")


class Course:
    """Where the run is: DVC's plan, the stage running and since when; sets :data:`~lsnmt.runner.console.STEP` and
    :data:`~lsnmt.runner.console.ETA` for each stage DVC starts, and records each stage's seconds
    (:class:`lsnmt.graph.eta.Clock`)."""

    def __init__(self, history: dict[str, float] | None = None) -> None:
        self.clock = eta.Clock([], eta.load() if history is None else history)
        self.current: str | None = None
        self.since = self.start = time.perf_counter()

    def visit(self, name: str, ran: bool) -> None:
        """DVC starts stage ``name`` (``ran``) or skips it."""
        self.close()
        if name not in self.clock.plan:
            self.clock.plan.append(name)
        if ran:
            self.current, self.since = name, time.perf_counter()
            os.environ[STEP] = self.clock.step(name)
            os.environ[ETA] = eta.minutes(self.clock.left(name))

    def close(self) -> None:
        """The stage running has ended (the next one starts, or DVC is done)."""
        if self.current is not None:
            self.clock.finished(self.current, time.perf_counter() - self.since)
            self.current = None

    def took(self) -> str:
        seconds = time.perf_counter() - self.start
        return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


class StageChatter(logging.Filter):
    """Drops DVC's per-stage INFO records and the auto-staging hint (see the module docstring), counting the stages
    run and skipped and telling ``course`` of each."""

    def __init__(self, course: Course | None = None) -> None:
        super().__init__()
        self.count: Counter[str] = Counter()
        self.course = course

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        msg, args = record.msg, record.args
        if msg == RAN or msg in SKIPPED:
            ran = msg == RAN
            self.count["run" if ran else "skipped"] += 1
            if self.course is not None and isinstance(args, tuple) and args:
                self.course.visit(str(args[0]), ran)
            return False
        if msg == "%s %s" and isinstance(args, tuple) and args[:1] == (">",):
            return False  # a stage's command
        return not (msg in LOCK or msg == "" or msg == AUTOSTAGE)

    def summary(self, command: list[str], took: str | None = None) -> str | None:
        """``dvc repro: N stage(s) run, M up to date[, in T]``; ``None`` when DVC reported no stage."""
        if not self.count:
            return None
        name = " ".join(a for a in command[:2] if not a.startswith("-"))
        line = f"dvc {name}: {self.count['run']} stage(s) run, {self.count['skipped']} up to date"
        return f"{line}, in {took}" if took else line


@contextlib.contextmanager
def _planned(course: Course) -> Iterator[None]:
    """DVC's plan (the stages it will visit, in order) handed to ``course``: ``dvc.repo.reproduce._reproduce``,
    which ``dvc repro`` and ``dvc exp run`` call with it, wrapped while DVC runs."""
    from dvc.repo import reproduce

    original = reproduce._reproduce

    def planned(stages: list[Any], *args: Any, **kwargs: Any) -> Any:
        course.clock.plan = [s.addressing for s in stages]
        return original(stages, *args, **kwargs)

    reproduce._reproduce = planned
    try:
        yield
    finally:
        reproduce._reproduce = original


@contextlib.contextmanager
def _no_push_hint() -> Iterator[None]:
    """DVC's "Use `dvc push`" line held back while the project has no remote."""
    from dvc.config import Config
    from dvc.ui import ui

    write = ui.write

    def filtered(*objects: Any, **kwargs: Any) -> None:
        if objects == (PUSH,) and not Config.from_cwd(validate=False).get("remote"):
            return
        write(*objects, **kwargs)

    ui.write = filtered
    try:
        yield
    finally:
        vars(ui).pop("write", None)


def main(argv: list[str] | None = None) -> int:
    """Run ``dvc <argv>`` with :class:`StageChatter` on DVC's console handlers; DVC's exit code."""
    argv = sys.argv[1:] if argv is None else argv
    from dvc.cli import main as dvc_main  # importing dvc installs its console handlers

    course = Course()
    chatter = StageChatter(course)
    handlers = {h for name in LOGGERS for h in logging.getLogger(name).handlers}
    for handler in handlers:
        handler.addFilter(chatter)
    try:
        with _planned(course), _no_push_hint():
            code = dvc_main(argv)
        course.close()
    finally:
        for handler in handlers:
            handler.removeFilter(chatter)
    line = chatter.summary(argv, course.took())
    if line and code == 0:  # on a failure DVC's error stays the last line
        print(line, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
