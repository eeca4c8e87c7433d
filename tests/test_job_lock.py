"""The job lock across the nodes of a cluster (lsnmt.runner.lock, lsnmt.runner.heartbeat).

A second node is a process with its own hostname (a UTS namespace) that sees the test's directory through a bind
mount (a mount namespace): ``unshare``, as root or in a user namespace; the tests that need one skip, saying so,
where neither is allowed. A bind mount is still one kernel, whose ``flock`` would hold across it, so both nodes
also replace ``fcntl.flock`` by one that lies (Lustre's ``localflock``, NFS's ``local_lock``: each node grants its
own) or fails (Lustre's ``noflock``): the lock must not depend on it.
"""

from __future__ import annotations

import errno
import os
import shlex
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lsnmt.runner import heartbeat, lock

from .conftest import ROOT

FLOCK = {
    "lies": "import fcntl\nfcntl.flock = lambda fd, op: None\n",
    "missing": "import errno, fcntl\n"
    "def _none(fd, op):\n    raise OSError(errno.ENOSYS, 'Function not implemented')\n"
    "fcntl.flock = _none\n",
}
"""What ``flock`` does between two nodes on a file system that does not share it."""
HOLD = """
    import sys
    from lsnmt.runner.base import guarded, setup_logging
    setup_logging(None)
    guarded("train", lambda: print("ready", flush=True) or sys.stdin.readline(), ("tiny", "naive"))
    """
"""A stage that holds the lock of ``train tiny naive`` until a line comes on its stdin."""
TRY = """
    from lsnmt.runner.base import guarded, setup_logging
    setup_logging(None)
    guarded("train", lambda: print("ran", flush=True), ("tiny", "naive"))
    """
"""A second run of that job."""
LOCK = "work/locks/tiny/train@naive.lock"


def _unshare() -> list[str] | None:
    """The ``unshare`` command of a second node here (``None``: neither root nor user namespaces)."""
    cmd = ["unshare", "--uts", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        cmd.insert(1, "--map-root-user")
    try:
        ok = subprocess.run([*cmd, "true"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return None
    return cmd if ok else None


UNSHARE = _unshare()
node = pytest.mark.skipif(UNSHARE is None, reason="a second node needs unshare (root, or user namespaces): not here")


def _python(code: str, flock: str) -> list[str]:
    return [sys.executable, "-c", FLOCK[flock] + textwrap.dedent(code)]


def _env(timeout: float | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if timeout is not None:
        env["LSNMT_LOCK_TIMEOUT"] = str(timeout)
    return env


def _holder(repo: Path, code: str = HOLD, flock: str = "lies", timeout: float | None = None) -> subprocess.Popen:
    """``code`` on this node, in a session of its own (killing it kills its keeper too), once it is ``ready``."""
    proc = subprocess.Popen(
        _python(code, flock),
        cwd=repo,
        env=_env(timeout),
        text=True,
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.communicate()
    return proc


def _on_node2(
    tmp_path: Path, code: str = TRY, flock: str = "lies", timeout: float | None = None
) -> subprocess.CompletedProcess:
    """``code`` on "node2": hostname ``node2``, the repository ``tmp_path/repo`` seen as ``tmp_path/mnt``."""
    assert UNSHARE is not None
    repo, mnt = tmp_path / "repo", tmp_path / "mnt"
    mnt.mkdir(exist_ok=True)
    script = (
        f"hostname node2 && mount --bind {shlex.quote(str(repo))} {shlex.quote(str(mnt))} && "
        f"cd {shlex.quote(str(mnt))} && exec {shlex.join(_python(code, flock))}"
    )
    return subprocess.run(
        [*UNSHARE, "sh", "-c", script], env=_env(timeout), capture_output=True, text=True, timeout=120
    )


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    return tmp_path / "repo"


def _record(path: Path, host: str, beat: float, state: str = "alive", pid: int = 4242) -> bytes:
    text = heartbeat.line(f"pid {pid} on {host} since 2025-01-01 12:00:00", beat, "0123456789ab", state)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    return text


@node
@pytest.mark.parametrize("flock", ["lies", "missing"])
def test_a_run_on_another_node_stops_at_once_naming_the_holder(tmp_path: Path, flock: str) -> None:
    """A requeued job starting on a second node while the first still runs: with a ``flock`` that is node-local
    or missing, both ran (the old lock), writing one job's checkpoints twice."""
    repo = _repo(tmp_path)
    first = _holder(repo, flock=flock)
    try:
        second = _on_node2(tmp_path, flock=flock)
        assert second.returncode == 75 and "ran" not in second.stdout, (second.returncode, second.stderr)
        (line,) = [x for x in second.stderr.splitlines() if "already running" in x]
        assert f"train tiny naive is already running (pid {first.pid} on {socket.gethostname()} since " in line
        assert line.endswith(f"lock {LOCK}): wait for it to end, or stop it, before starting it again"), line
    finally:
        first.communicate("\n", timeout=60)
    assert first.returncode == 0 and (repo / LOCK).read_bytes() == b""
    again = _on_node2(tmp_path, flock=flock)  # released: the second node runs it now
    assert again.returncode == 0 and again.stdout == "ran\n" and "taking it over" not in again.stderr


@node
def test_the_heartbeat_keeps_a_long_run_locked_and_a_dead_node_is_taken_over(tmp_path: Path) -> None:
    """A run longer than the timeout stays locked (its keeper beats); once its node dies (stage and keeper
    killed, the record left ``alive``) another node takes the lock over after the timeout, with a warning."""
    repo = _repo(tmp_path)
    first = _holder(repo, timeout=3)
    before = lock._read(repo / LOCK)
    time.sleep(4)  # more than the timeout since the lock was taken
    after = lock._read(repo / LOCK)
    assert before is not None and after is not None and before.beat is not None and after.beat is not None
    assert after.beat > before.beat + 2
    second = _on_node2(tmp_path, timeout=3)
    assert second.returncode == 75 and f"already running (pid {first.pid} on " in second.stderr, second.stderr
    os.killpg(first.pid, signal.SIGKILL)  # the node dies: no keeper marks the record
    first.communicate()
    assert (repo / LOCK).read_text().endswith(", alive\n")
    time.sleep(3.5)
    third = _on_node2(tmp_path, timeout=3)
    assert third.returncode == 0 and third.stdout == "ran\n", third.stderr
    assert f"held by pid {first.pid} on {socket.gethostname()} since " in third.stderr
    assert "which sent no heartbeat for " in third.stderr and "(LSNMT_LOCK_TIMEOUT: 3 s)" in third.stderr


@node
def test_a_multi_rank_run_stays_locked_after_its_exec_until_the_launcher_ends(tmp_path: Path) -> None:
    """``stages.train`` replaces itself by ``torchrun`` (here a program that waits for a line): the lock lasts
    as long as that program, beyond the timeout, and is released when it ends (no ``killed?`` warning after)."""
    repo = _repo(tmp_path)
    first = _holder(
        repo,
        timeout=2,
        code="""
        import sys
        from lsnmt.runner import launch
        from lsnmt.runner.base import guarded
        launch.command = lambda *a, **k: [sys.executable, "-c", "import sys; print('ready', flush=True); "
                                          "sys.stdin.readline()"]
        launch.check_devices = lambda *a: "cpu"
        world = type("World", (), {"world_size": 2})()
        guarded("train", lambda: launch.relaunch(world, [], "stages.train", "train"), ("tiny", "naive"))
        """,
    )
    time.sleep(3)
    second = _on_node2(tmp_path, timeout=2)
    assert second.returncode == 75 and f"already running (pid {first.pid} on " in second.stderr, second.stderr
    first.communicate("\n", timeout=60)
    assert first.returncode == 0
    for _ in range(100):  # the keeper releases it at the launcher's end
        if (repo / LOCK).read_bytes() == b"":
            break
        time.sleep(0.1)
    assert (repo / LOCK).read_bytes() == b""
    third = _on_node2(tmp_path, timeout=2)
    assert third.returncode == 0 and "taking it over" not in third.stderr, third.stderr


def test_a_fresh_heartbeat_from_another_host_stops_a_run_and_a_stale_one_is_taken_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The record of a run on another node (whose ``flock``, if any, this node does not see): the old lock took
    it over at once, heartbeat or not."""
    monkeypatch.setenv("LSNMT_LOCK_TIMEOUT", "60")
    path = tmp_path / "train@naive.lock"
    _record(path, "node9", time.time() - 5)
    with pytest.raises(
        lock.Busy,
        match=r"^train tiny naive is already running \(pid 4242 on node9 since "
        r"2025-01-01 12:00:00, last heartbeat \d+ s ago; lock ",
    ):
        lock.acquire(path, "train tiny naive")
    _record(path, "node9", time.time() - 90)
    held = lock.acquire(path, "train tiny naive")
    try:
        assert path.read_text().startswith(f"pid {os.getpid()} on {socket.gethostname()} since ")
    finally:
        lock.release(held)
    assert "held by pid 4242 on node9 since 2025-01-01 12:00:00, which sent no heartbeat for 90 s " in caplog.text
    assert path.read_bytes() == b""


def test_a_killed_stage_is_marked_ended_by_its_keeper_and_taken_over_at_once_from_another_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGKILL reaches the stage but not its keeper (the OOM killer): the record says ``ended``, so another node
    need not wait for the timeout."""
    repo = _repo(tmp_path)
    first = _holder(repo)
    os.kill(first.pid, signal.SIGKILL)
    first.communicate()
    path = repo / LOCK
    for _ in range(100):
        if path.read_bytes().endswith(b", ended\n"):
            break
        time.sleep(0.1)
    record = path.read_bytes()
    assert record.startswith(f"pid {first.pid} on ".encode()) and record.endswith(b", ended\n"), record
    assert b"\0" not in record
    monkeypatch.setattr(socket, "gethostname", lambda: "node2")
    held = lock.acquire(path, "train tiny naive")
    lock.release(held)
    assert f"held by pid {first.pid} on " in caplog.text and "ended without clearing it (killed?)" in caplog.text


def test_a_run_whose_lock_was_taken_over_stops_and_leaves_the_new_record(tmp_path: Path) -> None:
    """A node judged dead (its heartbeat stalled past the timeout) that comes back: its run stops (SIGTERM, exit
    143) rather than write beside the run that took the lock over, whose record it leaves."""
    repo = _repo(tmp_path)
    first = _holder(repo, timeout=0.8)
    path = repo / LOCK
    new = path.with_name("new")
    taken = _record(new, "node2", time.time())
    new.replace(path)  # the takeover: another file at the path
    try:
        first.wait(timeout=30)  # its stdin still open: only a signal ends it
    finally:
        first.kill()
    _, err = first.communicate()
    assert first.returncode == 143, err
    assert f"{LOCK} was taken over (id 0123456789ab) while pid {first.pid} ran; stopping it" in err
    assert path.read_bytes() == taken


@pytest.mark.parametrize("end", ["exception", "sigterm"])
def test_a_run_that_ends_badly_releases_its_lock(tmp_path: Path, end: str) -> None:
    repo = _repo(tmp_path)
    code = HOLD.replace("sys.stdin.readline()", "sys.stdin.readline() and int('x')")  # a ValueError
    first = _holder(repo, code=code)
    if end == "sigterm":
        first.send_signal(signal.SIGTERM)
    _, err = first.communicate("\n", timeout=60)
    assert first.returncode == (143 if end == "sigterm" else 1), err
    assert (repo / LOCK).read_bytes() == b""
    assert _running_in(repo) == []  # the keeper has gone too


def _running_in(repo: Path) -> list[str]:
    """The processes whose working directory is ``repo``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cwd").resolve() == repo.resolve():
                found.append(proc.name)
        except OSError:
            pass
    return found


def test_a_lock_that_turned_out_alive_is_put_back(tmp_path: Path) -> None:
    """A run that found a lock dead and sets it aside to remove it finds it alive there (a heartbeat came): it
    puts back the same file, which the holder's keeper goes on beating."""
    path = tmp_path / "x.lock"
    text = _record(path, "node9", time.time())
    inode = path.stat().st_ino
    assert lock._break(path) is None
    assert path.read_bytes() == text and path.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.lock"]


def test_without_hard_links_the_run_goes_on_unlocked_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    assert lock.acquire(tmp_path / "x.lock", "train tiny naive") is None
    assert "x.lock: cannot lock (Operation not permitted): a second run of train tiny naive would not be" in caplog.text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("raw", "seconds"), [("", 120.0), ("30", 30.0), ("0", 120.0), ("soon", 120.0)])
def test_the_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, raw: str, seconds: float) -> None:
    monkeypatch.setenv("LSNMT_LOCK_TIMEOUT", raw)
    assert lock.timeout() == seconds
