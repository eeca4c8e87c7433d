"""The console of a stage (lsnmt/runner/console.py, lsnmt/runner/progress.py): start and end lines with the time,
progress at a fixed interval off a terminal with no carriage returns, each kind of warning once with a count, and the
log file holding every line."""

from __future__ import annotations

import io
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lsnmt.runner import base as cli
from lsnmt.runner.console import CONSOLE, ETA, STEP, ConsoleFilter, console_handler, stage_clock
from lsnmt.runner.progress import Progress, progress

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def console(monkeypatch: pytest.MonkeyPatch):
    """The root logger with only a console handler writing to a string."""
    for var in ("LSNMT_VERBOSE", STEP, ETA):
        monkeypatch.delenv(var, raising=False)
    stream = io.StringIO()
    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    root.handlers = [console_handler(stream)]
    root.setLevel(logging.INFO)
    yield stream
    root.handlers, root.level = saved, level


def test_filter_passes_marked_info_errors_and_each_warning_kind_once() -> None:
    f = ConsoleFilter(repeat=1)

    def rec(level: int, msg: str, *args: object, **extra: object) -> logging.LogRecord:
        r = logging.LogRecord("x", level, __file__, 1, msg, args, None)
        r.__dict__.update(extra)
        return r

    assert not f.filter(rec(logging.INFO, "plain"))
    assert f.filter(rec(logging.INFO, "marked", **CONSOLE))
    shown = [f.filter(rec(logging.WARNING, "%s: %d cut", d, 3)) for d in ("en-de", "en-fr", "en-ru")]
    assert shown == [True, False, False]
    assert f.filter(rec(logging.WARNING, "another kind"))
    assert f.filter(rec(logging.ERROR, "%s", "e")) and f.filter(rec(logging.ERROR, "%s", "e"))
    assert f.held() == ["2 more warning(s) like 'en-de: 3 cut' (see the log)"]


def test_stage_clock_logs_start_end_and_the_held_warnings(console: io.StringIO) -> None:
    log = logging.getLogger("lsnmt.somewhere")
    with stage_clock("translate", "default, naive"):
        log.info("a detail for the log file only")
        for d in ("en-de", "en-fr", "en-ru"):
            log.warning("%s: hypotheses reached the length limit", d)
    lines = console.getvalue().splitlines()
    assert lines[0] == "translate: start (default, naive)"
    assert lines[1] == "en-de: hypotheses reached the length limit"
    assert lines[2] == "2 more warning(s) like 'en-de: hypotheses reached the length limit' (see the log)"
    assert re.fullmatch(r"translate: done in \d+ s", lines[3]) and len(lines) == 4


def test_under_dvc_the_start_line_says_the_place_and_time_left(
    console: io.StringIO, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """lsnmt.graph.brief sets the stage's place and the run's time left; the held warnings name the log file."""
    monkeypatch.setenv(STEP, "12/41")
    monkeypatch.setenv(ETA, "about 14 min left")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    file_handler = logging.FileHandler("logs/translate.log")
    logging.getLogger().addHandler(file_handler)
    try:
        with stage_clock("translate", "default, naive"):
            for d in ("en-de", "en-fr"):
                logging.getLogger("lsnmt.x").warning("%s: cut", d)
    finally:
        logging.getLogger().removeHandler(file_handler)
        file_handler.close()
    lines = console.getvalue().splitlines()
    assert lines[0] == "[12/41] translate: start (default, naive); about 14 min left in all"
    assert lines[2] == "1 more warning(s) like 'en-de: cut' (see logs/translate.log)"
    assert re.fullmatch(r"\[12/41\] translate: done in \d+ s", lines[3]), lines


def test_stage_clock_says_failed(console: io.StringIO) -> None:
    with pytest.raises(RuntimeError), stage_clock("train"):
        raise RuntimeError("x")
    assert re.search(r"^train: failed after \d+ s$", console.getvalue(), re.M)


def test_progress_off_a_terminal_logs_lines_at_the_interval(console: io.StringIO, monkeypatch) -> None:
    monkeypatch.setenv("LSNMT_PROGRESS", "log")
    with Progress(4, "train", "update", every=0.0) as bar:  # every update past the interval and 1/20 of the total
        for _ in range(4):
            bar.update()
    text = console.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[0].startswith("train: 1/4 update (25%), ") and "left" in lines[0]
    assert re.fullmatch(r"train: 4/4 update in \d+ s", lines[-1]) and len(lines) == 5


def test_a_slow_loop_writes_at_most_lines_per_loop(console: io.StringIO, monkeypatch) -> None:
    """Every update slower than the interval (a loaded machine): one line per 1/10 of the loop, not per update."""
    monkeypatch.setenv("LSNMT_PROGRESS", "log")
    with Progress(200, "train", "update", every=0.0) as bar:
        for _ in range(200):
            bar.update()
    lines = console.getvalue().splitlines()
    assert len(lines) == 10 + 1 and lines[0].startswith("train: 20/200 update (10%)")


def test_a_loop_inside_a_loop_writes_to_the_log_file_only(console: io.StringIO, monkeypatch) -> None:
    """The claim stage trains a dozen models inside its loop over jobs: the console follows the jobs (one line
    each at most), the trainings' start lines and progress go to the log file (here: a second handler)."""
    from lsnmt.train.announce import announce

    monkeypatch.setenv("LSNMT_PROGRESS", "log")
    everything = io.StringIO()
    logging.getLogger().addHandler(file_like := logging.StreamHandler(everything))
    try:
        with Progress(3, "claim", "job", every=0.0) as jobs:
            for _ in range(3):
                announce(logging.getLogger("lsnmt.train.trainer"), "train: 10 parameters")
                with Progress(4, "train", "update", every=0.0) as bar:
                    for _ in range(4):
                        bar.update()
                jobs.update()
        announce(logging.getLogger("lsnmt.train.trainer"), "train: after the loop")
    finally:
        logging.getLogger().removeHandler(file_like)
    shown = console.getvalue().splitlines()
    assert [line.split(":")[0] for line in shown] == ["claim"] * 4 + ["train"], shown
    assert shown[-1] == "train: after the loop"
    logged = everything.getvalue()
    assert logged.count("train: 10 parameters") == 3 and logged.count("train: 4/4 update in") == 3


def test_a_short_loop_stays_off_the_console(console: io.StringIO, monkeypatch) -> None:
    monkeypatch.setenv("LSNMT_PROGRESS", "log")
    assert list(progress(range(3), "report tables", unit="table")) == [0, 1, 2]
    assert console.getvalue() == ""


def test_no_bar_writes_carriage_returns_off_a_terminal(capfd: pytest.CaptureFixture[str], monkeypatch) -> None:
    """A loop's progress under pytest (stderr is not a terminal) writes no carriage return."""
    monkeypatch.delenv("LSNMT_PROGRESS", raising=False)
    list(progress(range(50), "loop"))
    assert "\r" not in capfd.readouterr().err


def test_loops_show_progress_only_through_lsnmt_progress() -> None:
    """tqdm straight from a module writes carriage-return bars into log files where its ``disable`` is not set;
    only lsnmt/runner/progress.py (and the download's byte bar, off when not on a terminal) may use it."""
    allowed = {"lsnmt/runner/progress.py", "lsnmt/data/fetch.py"}
    users = sorted(
        str(p.relative_to(ROOT))
        for d in ("lsnmt", "stages", "models")
        for p in (ROOT / d).rglob("*.py")
        if re.search(r"^\s*from tqdm|^\s*import tqdm", p.read_text(encoding="utf-8"), re.M)
    )
    assert set(users) <= allowed, users


def test_a_stage_prints_start_and_end_and_logs_the_rest(tmp_path: Path) -> None:
    """Through the stage runner: the console has the start and end lines, the log file every line too."""
    script = (
        "import logging, sys\n"
        "from lsnmt.experiment import stage as cli\n"
        "cli.run('probe', lambda exp: logging.getLogger('lsnmt.x').info('detail'), sys.argv[1:])\n"
    )
    log = tmp_path / "probe.log"
    out = subprocess.run(
        [sys.executable, "-c", script, "--log", str(log)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    err = out.stderr.splitlines()
    assert len(err) == 2, out.stderr
    assert err[0].endswith("probe: start (default)") and re.search(r"probe: done in \d+ s$", err[1])
    assert "detail" in log.read_text(encoding="utf-8") and "detail" not in out.stderr
    assert cli.stage_clock is stage_clock


def test_the_length_limit_warning_fits_the_situation() -> None:
    """An untrained model (the default's 200 updates) runs most hypotheses to the limit: expected, nothing to raise;
    a few cut hypotheses of a trained one: the limit is tight."""
    from lsnmt.decode.translate import length_advice

    untrained = length_advice(30, 32, 200)
    assert "expected" in untrained and "200 updates" in untrained and "not a setting to raise" in untrained
    assert "decode.max_len_b" not in untrained
    assert "raise decode.max_len_b" in length_advice(2, 32, 100_000)
