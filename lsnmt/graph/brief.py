"""DVC with a brief console: ``python -m lsnmt.graph.brief repro [ARGS]`` runs ``dvc repro [ARGS]`` (any dvc
command line works: ``exp run -S ...``) and holds back DVC's per-stage chatter.

For each stage it runs, DVC prints "Running stage 'x':", each command of the stage after ``>`` (here the guard and
the stage), "Updating lock file 'dvc.lock'" and a blank line; for each stage it skips, "Stage 'x' didn't change,
skipping". A stage of this project prints its own start and end lines (:func:`lsnmt.runner.console.stage_clock`),
so those DVC lines say nothing new: on a default run they were 209 of the 495 lines from the first stage on. This
module runs DVC's own entry point (``dvc.cli.main``, what the ``dvc`` command runs) with a filter on the handlers of
DVC's loggers that drops exactly those INFO records, and ends (when DVC succeeds) with one line counting them::

    dvc repro: 41 stage(s) run, 0 up to date

Everything else DVC writes passes: its warnings, its errors ("failed to reproduce 'train@lms'"), the hint to
``git add dvc.lock``, ``dvc exp run``'s experiment name. ``dvc -q`` is not the same: it hides DVC's errors too. The
filter matches DVC's message templates (DVC 3.x); if a later DVC words them differently, they are shown again, so
nothing is ever lost. A stage's own output does not pass through DVC's logging (the stage inherits the console), so
it is untouched. ``dvc repro`` itself keeps DVC's full console.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter

RAN = "Running stage '%s':"
SKIPPED = ("Stage '%s' didn't change, skipping", "'%s' didn't change, skipping")
LOCK = ("Updating lock file '%s'", "Generating lock file '%s'")
LOGGERS = ("dvc", "dvc_objects", "dvc_data")


class StageChatter(logging.Filter):
    """Drops DVC's per-stage INFO records (see the module docstring), counting the stages run and skipped."""

    def __init__(self) -> None:
        super().__init__()
        self.count: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        msg, args = record.msg, record.args
        if msg == RAN:
            self.count["run"] += 1
            return False
        if msg in SKIPPED:
            self.count["skipped"] += 1
            return False
        if msg == "%s %s" and isinstance(args, tuple) and args[:1] == (">",):
            return False  # a stage's command
        return not (msg in LOCK or msg == "")

    def summary(self, command: list[str]) -> str | None:
        """``dvc repro: N stage(s) run, M up to date``; ``None`` when DVC reported no stage."""
        if not self.count:
            return None
        name = " ".join(a for a in command[:2] if not a.startswith("-"))
        return f"dvc {name}: {self.count['run']} stage(s) run, {self.count['skipped']} up to date"


def main(argv: list[str] | None = None) -> int:
    """Run ``dvc <argv>`` with :class:`StageChatter` on DVC's console handlers; DVC's exit code."""
    argv = sys.argv[1:] if argv is None else argv
    from dvc.cli import main as dvc_main  # importing dvc installs its console handlers

    chatter = StageChatter()
    handlers = {h for name in LOGGERS for h in logging.getLogger(name).handlers}
    for handler in handlers:
        handler.addFilter(chatter)
    try:
        code = dvc_main(argv)
    finally:
        for handler in handlers:
            handler.removeFilter(chatter)
    line = chatter.summary(argv)
    if line and code == 0:  # on a failure DVC's error stays the last line
        print(line, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
