"""What a killed stage, a full disk, a second run of a job and a stop signal leave: no temporary copy, one line,
one writer, exit 143 (lsnmt.io, lsnmt.runner.lock, lsnmt.runner.base.guarded)."""

from __future__ import annotations

import errno
import logging
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from lsnmt.io import DiskFull, atomic_dir, atomic_write
from lsnmt.runner import base as cli
from lsnmt.train import checkpoint as ckpt

from .conftest import ROOT


def _start(cwd: Path, code: str) -> subprocess.Popen:
    """``code`` in a Python process of its own in ``cwd``, once it has printed ``ready``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.communicate()
    return proc


def test_the_temporary_copy_of_a_killed_writer_is_removed_by_the_next_write(tmp_path: Path) -> None:
    """SIGKILL in ``prepare`` or ``encode`` left ``.prepared.*.tmp`` / ``.bin.*.tmp``, a whole copy of the data,
    that no later run removed."""
    proc = _start(tmp_path, """
        import time
        from lsnmt.io import atomic_dir, atomic_write
        with atomic_dir("bin") as tmp, atomic_write("meta.json") as fh:
            (tmp / "shard").write_bytes(bytes(1000))
            fh.write("{")
            print("ready", flush=True)
            time.sleep(60)
        """)
    proc.kill()
    proc.wait()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and left[0].startswith(".bin.") and left[1].startswith(".meta.json."), left
    assert all(n.endswith(".tmp") for n in left) and (tmp_path / left[0] / "shard").is_file()
    with atomic_dir(tmp_path / "bin") as tmp:
        (tmp / "shard").write_bytes(b"x")
    with atomic_write(tmp_path / "meta.json") as fh:
        fh.write("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "meta.json"]


def test_other_names_temporaries_are_left_alone(tmp_path: Path) -> None:
    for name in (".bin2.abcd1234.tmp", ".bin.meta.json.abcd1234.tmp", ".bin.abcd1234.tmp"):
        (tmp_path / name).write_text("")
    with atomic_dir(tmp_path / "bin"):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [".bin.meta.json.abcd1234.tmp", ".bin2.abcd1234.tmp", "bin"]


def free_space(free: int) -> Callable[[object], SimpleNamespace]:
    """A ``shutil.disk_usage`` that reports ``free`` bytes (of 1 GiB) on any path."""
    return lambda _path: SimpleNamespace(free=free, total=2**30)


def test_a_full_disk_is_one_line_naming_the_path_and_the_space_left(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DiskFull, match=rf"^{tmp_path}/a\.txt: no space left on the device \(\d+\.\d MiB free on "
                                       r"its file system\); free some space and run the stage again$"):
        with atomic_write(tmp_path / "a.txt") as fh:
            fh.write("x")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert list(tmp_path.iterdir()) == []

    def full(obj, fh):  # torch.save turns the failed write into this RuntimeError (the probe's traceback)
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 42368 vs 42262")

    monkeypatch.setattr(torch, "save", full)
    monkeypatch.setattr("shutil.disk_usage", free_space(4096))
    with pytest.raises(DiskFull, match=r"step6\.pt: no space left on the device \(0\.0 MiB free"):
        ckpt.save(tmp_path / "step6.pt", {"step": 6})


def test_a_full_disk_outside_the_atomic_writers_is_one_line_too(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # the space left is read twice (the message, the expectation): fixed, so other writers on the disk between the
    # two reads cannot change it (CI's run saw 45848.0 against 45847.9 MiB)
    monkeypatch.setattr("shutil.disk_usage", free_space(3 * 2**20))

    def fill() -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x.src"))

    with caplog.at_level(logging.ERROR), pytest.raises(SystemExit) as info:
        cli.guarded("sample", fill)
    assert info.value.code == 1
    assert [r.getMessage() for r in caplog.records] == [str(DiskFull.at(tmp_path / "x.src"))]
    assert "(3.0 MiB free on its file system)" in caplog.records[0].getMessage()


def test_an_allocation_beyond_the_machine_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """A size the ranges let through but this machine cannot hold (``sample.size: 10**15`` was numpy's
    allocation traceback in the trainer)."""
    import numpy as np

    with caplog.at_level(logging.ERROR), pytest.raises(SystemExit) as info:
        cli.guarded("train", lambda: np.zeros(10**15))
    assert info.value.code == 1
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("out of memory (Unable to allocate 7.11 PiB") and line.endswith("for this machine")


def test_a_second_run_of_a_job_stops_at_once_naming_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """Two ``train`` of one method in one repository both ran and interleaved curve.tsv (44 rows, not 25)."""
    monkeypatch.chdir(tmp_path)
    first = _start(tmp_path, """
        import time
        from lsnmt.runner.base import guarded
        guarded("train", lambda: print("ready", flush=True) or time.sleep(60), ("tiny", "naive"))
        """)
    ran: list[str] = []
    with pytest.raises(SystemExit) as info:
        cli.guarded("train", lambda: ran.append("naive"), ("tiny", "naive"))
    assert info.value.code == cli.BUSY and ran == []
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert line.startswith(f"train tiny naive is already running (pid {first.pid} on ")
    assert line.endswith("lock work/locks/tiny/train@naive.lock): wait for it to end, or stop it, before starting "
                         "it again")
    cli.guarded("train", lambda: ran.append("lms"), ("tiny", "lms"))  # another job runs beside it
    first.kill()
    first.wait()
    caplog.clear()
    cli.guarded("train", lambda: ran.append("naive"), ("tiny", "naive"))  # the killed run's lock is stale
    assert ran == ["lms", "naive"]
    assert f"held by pid {first.pid} on " in caplog.text and "ended without clearing it (killed?)" in caplog.text
    assert (tmp_path / "work/locks/tiny/train@naive.lock").read_text() == ""  # a clean end clears the record


def test_a_lock_taken_over_from_a_killed_run_records_its_holder_without_nul_bytes(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The takeover wrote its record at the offset where reading the stale one had ended, after a truncate: NUL
    bytes before it, in the lock file, the takeover warning's successors and the "already running" line."""
    from lsnmt.runner import lock

    path = tmp_path / "train@naive.lock"
    killed = _start(tmp_path, f"""
        import time
        from lsnmt.runner import lock
        lock.acquire(lock.Path({str(path)!r}), "train tiny naive")
        print("ready", flush=True)
        time.sleep(60)
        """)
    killed.kill()
    killed.wait()
    stale = path.read_bytes()
    assert stale.startswith(f"pid {killed.pid} on ".encode())
    fd = lock.acquire(path, "train tiny naive")
    try:
        record = path.read_bytes()
        assert b"\0" not in record and record.startswith(f"pid {os.getpid()} on ".encode()), record
        with pytest.raises(lock.Busy) as busy:  # a second run now: its line names this one, without NUL bytes
            lock.acquire(path, "train tiny naive")
        assert "\0" not in str(busy.value) and f"(pid {os.getpid()} on " in str(busy.value)
    finally:
        lock.release(fd)
    assert f"held by pid {killed.pid} on " in caplog.text and path.read_bytes() == b""


@pytest.mark.parametrize("unit", [0, 1], ids=["set-up", "between-units"])
def test_sigterm_outside_the_updates_exits_143_with_one_line(tmp_path: Path, unit: int) -> None:
    """SIGTERM that reached task_train between NER / QA units, or a stage in its set-up, killed it outright
    (signal 15, no line), not the documented clean exit 143."""
    proc = _start(tmp_path, f"""
        import time
        from lsnmt.runner.base import guarded, setup_logging
        setup_logging(None)
        def units():
            for unit in range(3):
                if unit == {unit}:  # 0: still setting up; 1: the first unit done, the next not begun
                    print("ready", flush=True)
                    time.sleep(20)
        guarded("task_train", units, ("tinytasks", None))
        """)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, (proc.returncode, err)
    start, end, line = err.strip().splitlines()  # the console's start and end lines, then the one stop line
    assert start.endswith("task_train: start (tinytasks)") and "task_train: failed after" in end
    assert line.endswith("WARNING stages.task_train: stopped by SIGTERM outside the updates (set-up, evaluation or "
                         "between units); nothing half-written is kept, the next run resumes from the last checkpoint")


def test_sigterm_during_the_imports_stops_the_stage_once_it_starts(tmp_path: Path) -> None:
    """``python -m stages.<name>`` notes stop signals from its start (stages/__init__.py): one during its imports
    (seconds: torch) killed it outright."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = """
        import os, signal, sys
        sys.argv[0] = "-m"  # as while `python -m stages.x` imports the stages package
        import stages
        os.kill(os.getpid(), signal.SIGTERM)  # still importing: noted, not fatal
        from lsnmt.runner.base import guarded, setup_logging
        setup_logging(None)
        guarded("train", lambda: print("trained"), ("tiny", "naive"))
        """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 143 and "trained" not in out.stdout, (out.returncode, out.stderr)
    assert "WARNING stages.train: stopped by SIGTERM outside the updates" in out.stderr

