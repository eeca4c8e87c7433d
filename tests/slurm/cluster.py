"""A one-node SLURM for the tests, from Debian's packages: munge, MariaDB, slurmdbd, slurmctld and slurmd.

    with LocalSlurm() as cluster:            # installs what is missing (apt-get), starts the daemons
        subprocess.run(["sbatch", ...], env=cluster.env)
    # every daemon it started is stopped, its files removed, also after a failure

State, logs and the database live in one temporary folder, on ports picked free at start. The configuration
goes where SLURM looks by default, /etc/slurm (slurm.conf, gres.conf, slurmdbd.conf, each marked as this
module's and removed at the end): the slurm-jobstep plugin runs the job's command through ``srun`` with every
``SLURM_*`` variable but the job's identity removed, ``SLURM_CONF`` included, so a configuration elsewhere is
not found inside jobs. A machine that has its own /etc/slurm/slurm.conf is refused rather than reconfigured.
Facts about SLURM 22.05 on Debian 12 that shape it:

- munged refuses to run as root: it runs as the ``munge`` user. The clients (``sacctmgr`` ...) talk to munge's
  default socket whatever ``AuthInfo`` says, so a munged that already answers there is used as it is;
  otherwise one is started with the package's key and stopped afterwards.
- snakemake-executor-plugin-slurm polls job states with ``sacct``; without accounting storage ``sacct`` has
  nothing to report once a job leaves ``squeue`` (``MinJobAge``) and the plugin waits for ever. So accounting
  goes to slurmdbd with MariaDB, and the cluster, its account ``ci`` and the user are registered.
- GPUs for scheduling tests are character devices like /dev/null (``mknod c 1 3``) in gres.conf; jobs asking
  for ``--gpus`` get ``CUDA_VISIBLE_DEVICES`` but no device (torch sees no CUDA and trains on the CPU).
- No cgroups (``proctrack/linuxproc``, ``task/none``): this runs in containers and VMs without systemd.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

PACKAGES = ("slurm-wlm", "slurmdbd", "munge", "mariadb-server")
BINARIES = ("slurmctld", "slurmd", "slurmdbd", "sbatch", "sacct", "sacctmgr", "munged", "mungekey",
            "mariadbd", "mariadb-install-db", "mariadb")
SBIN = "/usr/local/sbin:/usr/sbin:/sbin"
ETC = Path("/etc/slurm")
MARK = "# written by lsnmt tests/slurm/cluster.py for a test cluster; removed when it stops\n"
CLUSTER, ACCOUNT, PARTITION, NODE = "lsnmtci", "ci", "ci", "ci0"


class ClusterError(RuntimeError):
    """The test cluster could not be set up; the message says which step and where its log is."""


def _which(name: str) -> str | None:
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:{SBIN}")


def install_missing() -> list[str]:
    """apt-get install the packages whose programs are missing (services are not started by the install);
    returns what was installed."""
    missing = [b for b in BINARIES if _which(b) is None]
    if not missing:
        return []
    if os.geteuid() != 0:
        raise ClusterError(f"{', '.join(missing)} missing and not root: install {' '.join(PACKAGES)} first")
    policy = Path("/usr/sbin/policy-rc.d")
    made_policy = not policy.exists()
    if made_policy:  # keep the packages' init scripts from starting system daemons
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]
    try:
        if subprocess.run(install, env=env, capture_output=True).returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, capture_output=True, check=False)
            out = subprocess.run(install, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                raise ClusterError(f"apt-get install {' '.join(PACKAGES)} failed:\n{out.stderr[-2000:]}")
    finally:
        if made_policy:
            policy.unlink()
    return list(PACKAGES)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what: str, ok, timeout: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log and log.is_file() else ""
            raise ClusterError(f"{what} not ready after {timeout:.0f}s (log {log}):\n{tail}")
        time.sleep(0.5)


class LocalSlurm:
    """Start with :meth:`start` (or ``with``); :attr:`env` is the environment for SLURM clients and jobs."""

    def __init__(self, cpus: int | None = None, memory_mb: int = 4000, gpus: int = 2) -> None:
        self.cpus = cpus or os.cpu_count() or 1
        self.memory_mb, self.gpus = memory_mb, gpus
        self.base = Path(tempfile.mkdtemp(prefix="lsnmt-slurm-"))
        self.base.chmod(0o755)  # the munge and mysql users traverse it
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.conf = ETC / "slurm.conf"
        self.env = {**os.environ, "PATH": f"{os.environ.get('PATH', '')}:{SBIN}"}
        self.env.pop("SLURM_CONF", None)
        self.ports = {k: _free_port() for k in ("ctld", "slurmd", "dbd", "mysql")}
        self.host = socket.gethostname().split(".")[0]

    # -- life cycle -------------------------------------------------------------------------------------------
    def __enter__(self) -> LocalSlurm:
        self._trap_termination()
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def _trap_termination(self) -> None:
        """SIGTERM / SIGHUP (a CI runner's timeout) become SystemExit, so that ``with`` still stops the daemons."""
        self._handlers = {}
        if threading.current_thread() is not threading.main_thread():
            return

        def leave(signum: int, _frame: object) -> None:
            raise SystemExit(128 + signum)

        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._handlers[sig] = signal.signal(sig, leave)

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        install_missing()
        for name in ("slurm.conf", "gres.conf", "slurmdbd.conf"):
            path = ETC / name
            if path.exists() and not path.read_text(errors="replace").startswith(MARK):
                raise ClusterError(f"{path} exists: this machine has a SLURM of its own; the test cluster "
                                   "would replace its configuration")
        for d in ("log", "state", "spool", "dev", "run"):
            (self.base / d).mkdir()
        self._munge()
        self._mariadb()
        self._write_slurm_conf()
        self._slurmdbd()
        self._register()
        self._daemon("slurmctld", ["slurmctld", "-D", "-c"])
        _wait("slurmctld", lambda: self._ok(["scontrol", "ping"], "UP"), 60, self.base / "log/slurmctld.log")
        self._daemon("slurmd", ["slurmd", "-D", "-N", NODE])
        _wait("slurmd (node idle)", lambda: self._ok(["sinfo", "-h", "-n", NODE, "-o", "%T"], "idle"), 90,
              self.base / "log/slurmd.log")

    def stop(self) -> None:
        """Cancel the jobs, stop every daemon this object started (newest first), remove the folder."""
        if any(name == "slurmctld" for name, _ in self.procs):
            self.run(["scancel", "--user", pwd.getpwuid(os.geteuid()).pw_name], check=False)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self._out(["squeue", "-h", "-o", "%i"]).strip():
                time.sleep(1)
        for _name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
        self.procs.clear()
        for sig, handler in getattr(self, "_handlers", {}).items():
            signal.signal(sig, handler)
        for name in ("slurm.conf", "gres.conf", "slurmdbd.conf"):
            path = ETC / name
            if path.is_file() and path.read_text(errors="replace").startswith(MARK):
                path.unlink()
        if not os.environ.get("LSNMT_SLURM_KEEP"):
            shutil.rmtree(self.base, ignore_errors=True)

    # -- helpers ----------------------------------------------------------------------------------------------
    def run(self, cmd: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
        out = subprocess.run(cmd, env=self.env, capture_output=True, text=True, **kw)
        if check and out.returncode != 0:
            raise ClusterError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
        return out

    def _out(self, cmd: list[str]) -> str:
        return self.run(cmd, check=False, timeout=30).stdout

    def _ok(self, cmd: list[str], expect: str) -> bool:
        return expect in self._out(cmd)

    def _daemon(self, name: str, cmd: list[str], user: str | None = None) -> subprocess.Popen:
        log = (self.base / "log" / f"{name}.out").open("w")
        proc = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                user=user, group=user)
        self.procs.append((name, proc))
        time.sleep(0.5)
        if proc.poll() is not None:
            raise ClusterError(f"{name} exited at once ({proc.returncode}): see {self.base}/log/{name}.out")
        return proc

    def _chown(self, path: Path, user: str) -> None:
        pw = pwd.getpwnam(user)
        os.chown(path, pw.pw_uid, pw.pw_gid)

    # -- the daemons ------------------------------------------------------------------------------------------
    def _munge_works(self) -> bool:
        cred = subprocess.run(["munge", "-n"], capture_output=True)
        return cred.returncode == 0 and subprocess.run(["unmunge"], input=cred.stdout,
                                                       capture_output=True).returncode == 0

    def _munge(self) -> None:
        if self._munge_works():
            return  # a munged is running (a real cluster node): use it, leave it alone
        key = Path("/etc/munge/munge.key")
        if not key.is_file():
            subprocess.run(["mungekey", "--create"], check=True, user="munge", group="munge")
        for d in (Path("/run/munge"), Path("/var/lib/munge"), Path("/var/log/munge")):
            d.mkdir(mode=0o755, exist_ok=True)
            self._chown(d, "munge")
        self._daemon("munged", ["munged", "--foreground"], user="munge")
        _wait("munged", self._munge_works, 30, Path("/var/log/munge/munged.log"))

    def _mariadb(self) -> None:
        d = self.base / "mysql"
        d.mkdir(mode=0o755)
        self._chown(d, "mysql")
        self.mysql_socket = d / "mysqld.sock"
        self.run(["mariadb-install-db", "--no-defaults", "--user=mysql", f"--datadir={d}/data",
                  "--auth-root-authentication-method=socket", "--skip-test-db"])
        self._daemon("mariadbd", ["mariadbd", "--no-defaults", "--user=mysql", f"--datadir={d}/data",
                                  f"--socket={self.mysql_socket}", f"--port={self.ports['mysql']}",
                                  "--bind-address=127.0.0.1", f"--pid-file={d}/mariadbd.pid",
                                  f"--log-error={self.base}/log/mariadbd.log", "--innodb-buffer-pool-size=64M",
                                  "--innodb-lock-wait-timeout=900"])
        _wait("mariadbd", self.mysql_socket.exists, 60, self.base / "log/mariadbd.log")
        sql = ("CREATE USER 'slurm'@'localhost' IDENTIFIED BY 'slurm'; "
               "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm'; "
               "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; "
               "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';")
        self.run(["mariadb", "--no-defaults", f"--socket={self.mysql_socket}", "-u", "root", "-e", sql])

    def _write_slurm_conf(self) -> None:
        b, p, auth = self.base, self.ports, "AuthType=auth/munge\n"
        ETC.mkdir(parents=True, exist_ok=True)
        (ETC / "slurmdbd.conf").write_text(
            f"{MARK}{auth}DbdHost=localhost\nDbdPort={p['dbd']}\nSlurmUser=root\n"
            f"StorageType=accounting_storage/mysql\nStorageHost=127.0.0.1\nStoragePort={p['mysql']}\n"
            "StorageUser=slurm\nStoragePass=slurm\nStorageLoc=slurm_acct_db\n"
            f"LogFile={b}/log/slurmdbd.log\nPidFile={b}/run/slurmdbd.pid\n")
        (ETC / "slurmdbd.conf").chmod(0o600)
        devices = []
        for i in range(self.gpus):
            dev = b / "dev" / f"gpu{i}"
            os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))  # a character device like /dev/null
            devices.append(str(dev))
        (ETC / "gres.conf").write_text(
            f"{MARK}AutoDetect=off\n" + "".join(f"NodeName={NODE} Name=gpu File={d}\n" for d in devices))
        self.conf.write_text(f"""{MARK}\
ClusterName={CLUSTER}
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={p['ctld']}
SlurmdPort={p['slurmd']}
SlurmUser=root
{auth}StateSaveLocation={b}/state
SlurmdSpoolDir={b}/spool
SlurmctldPidFile={b}/run/slurmctld.pid
SlurmdPidFile={b}/run/slurmd.pid
SlurmctldLogFile={b}/log/slurmctld.log
SlurmdLogFile={b}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
MinJobAge=300
KillWait=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort={p['dbd']}
AccountingStorageEnforce=associations
AccountingStoreFlags=job_comment
AccountingStorageTRES=gres/gpu
GresTypes=gpu
NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname={self.host} CPUs={self.cpus} RealMemory={self.memory_mb} \
Gres=gpu:{self.gpus} State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=60 State=UP
""")

    def _slurmdbd(self) -> None:
        self._daemon("slurmdbd", ["slurmdbd", "-D"])
        _wait("slurmdbd", lambda: self.run(["sacctmgr", "-n", "list", "cluster"], check=False).returncode == 0, 60,
              self.base / "log/slurmdbd.log")

    def _register(self) -> None:
        user = pwd.getpwuid(os.geteuid()).pw_name
        self.run(["sacctmgr", "-i", "add", "cluster", CLUSTER])
        self.run(["sacctmgr", "-i", "add", "account", ACCOUNT, f"Cluster={CLUSTER}", "Description=ci",
                  "Organization=ci"])
        self.run(["sacctmgr", "-i", "add", "user", user, f"Account={ACCOUNT}", f"DefaultAccount={ACCOUNT}",
                  f"Cluster={CLUSTER}"])
