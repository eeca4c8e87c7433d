"""The check's steps in order, each under its budget (``scripts/gpu_check.sh``; docs/gpu.md).

1. the device test tier (``pytest --device cuda -m cuda tests/device``; on a CPU only collected) beside the data
   stages, which need the CPU alone: the stages the translate stage reads from, in the stage table's order
   (:func:`lsnmt.gpucheck.order.stages_for`);
2. the benchmarks, one at a time on an otherwise idle machine: ``host_cost.py`` (default_gpu's real model and the
   floor model), ``throughput.py`` on default_gpu and on opus100's transformer_big (MarianMT, MFU at 16,384 tokens);
3. naive alone in a time-box (its first 100 updates, its rate), then the four trainings together in the time left
   (naive resumed), each stopped at the box and finished there (:mod:`lsnmt.gpucheck.trainings`);
4. translation of naive, LMS and LSL, and sacreBLEU's scores.

A step that fails is reported and the next runs; a data stage that fails skips what needs its output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from lsnmt.gpucheck import steps, trainings, trainlog
from lsnmt.gpucheck.order import stages_for
from lsnmt.gpucheck.plan import EXPERIMENT, ROOT, TRAINED, TRANSLATED, Plan, with_steps
from lsnmt.gpucheck.report import Findings
from lsnmt.gpucheck.scores import score
from lsnmt.gpucheck.steps import Outcome
from lsnmt.typed import load_yaml

BENCHMARKS = {
    "host cost": "host_cost.py",
    "throughput default_gpu": "throughput.py",
    "throughput opus100": "throughput.py",
}


@dataclass
class Check:
    """One run of the check: its plan, folders (``out``: the report; ``work``: the stages' working folder) and
    what it found."""

    plan: Plan
    out: Path
    work: Path
    skip: set[str]
    ledger: steps.Ledger
    found: Findings
    params: Path = field(init=False)
    env: dict[str, str] = field(init=False)
    logs: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.params = self.out / "params.yaml"
        self.env = steps.child_env(self.plan.device == "cpu")
        (self.work / "check_logs").mkdir(parents=True, exist_ok=True)

    def log(self, name: str) -> Path:
        path = self.work / "check_logs" / f"{name.replace(' ', '_')}.log"
        self.logs.append(path)
        return path

    def step(self, name: str, cmd: Sequence[str], budget: float, cwd: Path | None = None) -> Outcome:
        return self.keep(steps.run(self.ledger, name, cmd, budget, self.log(name), cwd or self.work, self.env))

    def keep(self, out: Outcome) -> Outcome:
        self.found.steps.append(out)
        return out


def train_reserve(p: Plan) -> float:
    """Seconds kept for the trainings, their finish and the translations."""
    return p.alone_box + p.together_min + 2 * stop_time(p) + p.caps["finish"] + p.caps["translate"]


def stop_time(p: Plan) -> float:
    """The most a time-boxed group can run past its box: the grace, then the wait for a clean stop."""
    return p.grace + trainings.STOP_WAIT


def stage_cmd(c: Check, stage: str, *extra: str, params: Path | None = None) -> list[str]:
    log = c.work / "logs" / f"{'_'.join([stage, *extra[1::2]])}.log"
    return [
        steps.python(),
        "-m",
        f"stages.{stage}",
        "--params",
        str(params or c.params),
        "--experiment",
        EXPERIMENT,
        *extra,
        "--log",
        str(log),
    ]


def in_parallel(calls: Sequence[Callable[[], Outcome]]) -> list[Outcome]:
    with ThreadPoolExecutor(max(1, len(calls))) as pool:
        return list(pool.map(lambda f: f(), calls))


def data_and_tests(c: Check) -> bool:
    """Step 1: the device tests beside the data stages; whether every data stage ran."""
    order = [s.name for s in stages_for("translate", load_yaml(c.params)["experiments"][EXPERIMENT])]
    c.ledger.say(f"pipeline order (lsnmt/graph/stages.py): {', '.join(order)}")
    data = [s for s in order if s not in ("train", "translate")]

    def tests() -> Outcome:
        cuda = ["--device", "cuda", "-m", "cuda"] if c.plan.device == "cuda" else []
        cmd = [steps.python(), "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *cuda, "tests/device"]
        return c.step("device tests", cmd, c.ledger.budget(c.plan.caps["device tests"], train_reserve(c.plan)), ROOT)

    def chain() -> bool:
        for i, stage in enumerate(data):
            out = c.step(stage, stage_cmd(c, stage), c.ledger.budget(c.plan.caps.get(stage, 60), train_reserve(c.plan)))
            if not out.ok:
                for later in data[i + 1 :]:
                    c.keep(steps.skipped(c.ledger, later, f"needs {stage}"))
                return False
        return True

    if "tests" in c.skip:
        return chain()
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(tests)
        ok = chain()
        pending.result()
    return ok


def benchmarks(c: Check, data_ok: bool) -> None:
    """Step 2, each benchmark writing its figures to ``out/<name>.json``."""
    for name, script in BENCHMARKS.items():
        budget = c.ledger.budget(c.plan.caps[name], train_reserve(c.plan) if data_ok else 0.0)
        json = c.out / f"{name.replace(' ', '_')}.json"
        deadline = ["--deadline", f"{max(1.0, budget - c.plan.startup):.0f}"] if script == "throughput.py" else []
        cmd = [steps.python(), str(ROOT / "benchmarks" / script), *c.plan.bench[name], *deadline, "--json", str(json)]
        if c.step(name, cmd, budget, ROOT).ok and json.is_file():
            content = load_yaml(json)
            if name == "host cost":
                c.found.host = content
            else:
                c.found.throughput[name.split()[1]] = content


def train_all(c: Check) -> dict[str, trainlog.TrainLog]:
    """Step 3: naive alone, then the four together, then the finish of those stopped; their logs (together's)."""
    p, left = c.plan, c.ledger.left
    after = p.caps["finish"] + p.caps["translate"]
    box = max(1.0, min(p.alone_box, left() - (p.together_min + 2 * stop_time(p) + after)))
    lines = max(p.min_lines, p.first_updates // p.log_every + 2)  # its first updates and a rate after them
    alone = trainings.run_group(
        c.ledger, "alone", ["naive"], c.params, c.work, c.work / "check_logs", box, p.grace, lines, c.env
    )
    for t, out in alone:
        c.keep(out)
        c.logs.append(t.log)
        log = t.read()
        c.found.first, c.found.alone_rate = (
            trainlog.first_updates(log, p.first_updates),
            trainlog.rate(log, p.first_updates),
        )
    box = min(p.together_max, max(p.together_min, left() - (stop_time(p) + after)))
    group = trainings.run_group(
        c.ledger, "together", list(TRAINED), c.params, c.work, c.work / "check_logs", box, p.grace, p.min_lines, c.env
    )
    logs = {t.method: t.read() for t, _ in group}
    c.found.together = trainlog.combined(list(logs.values()))
    for t, out in group:
        c.keep(out)
        c.logs.append(t.log)
    finish(c, [(t, out) for t, out in group if out.status == "stopped at its box"])
    return logs


def finish(c: Check, stopped: list[tuple[trainings.Training, Outcome]]) -> None:
    """Each stopped training finished at the update it stopped after (its own params file: ``max_steps``)."""
    budget = c.ledger.budget(c.plan.caps["finish"])
    calls = []
    for t, _ in stopped:
        params = c.work / f"params_{t.method}.yaml"
        params.write_text(
            yaml.safe_dump(with_steps(load_yaml(c.params), t.read().reached), sort_keys=False), encoding="utf-8"
        )
        cmd = stage_cmd(c, "train", "--method", t.method, params=params)
        calls.append(functools.partial(c.step, f"finish {t.method}", cmd, budget))
    in_parallel(calls)


def translate_all(c: Check) -> list[str]:
    """Step 4: translate each of :data:`TRANSLATED` that has a model (at once); those translated."""
    have = [m for m in TRANSLATED if (c.work / "results" / EXPERIMENT / "train" / m / "model.pt").is_file()]
    for m in TRANSLATED:
        if m not in have:
            c.keep(steps.skipped(c.ledger, f"translate {m}", "no trained model"))
    budget = c.ledger.budget(c.plan.caps["translate"])
    outs = in_parallel(
        [functools.partial(c.step, f"translate {m}", stage_cmd(c, "translate", "--method", m), budget) for m in have]
    )
    return [m for m, o in zip(have, outs, strict=True) if o.ok]


def trained_words(c: Check, logs: dict[str, trainlog.TrainLog]) -> None:
    """How far each training got, in words, and whether all reached their full updates."""
    full = load_yaml(c.params)["experiments"][EXPERIMENT]["train"]["max_steps"]
    done = {o.name.removeprefix("finish "): o.ok for o in c.found.steps if o.name.startswith("finish ")}
    for m, log in logs.items():
        rate = trainlog.rate(log)
        pace = f" at {rate:.1f} updates/s" if rate else ""
        if log.stopped is None and log.reached == full:
            c.found.trained[m] = f"{full:,} of {full:,}"
        elif done.get(m):
            c.found.trained[m] = f"{log.reached:,} of {full:,} (sized to its time-box{pace}: max_steps {log.reached:,})"
        else:
            c.found.trained[m] = f"{log.reached:,} of {full:,} (not finished: see its step)"
    c.found.finished_all = bool(logs) and all(v.startswith(f"{full:,} of") for v in c.found.trained.values())


def run(c: Check) -> None:
    """Every step (module docstring), what they measured in ``c.found``."""
    data_ok = data_and_tests(c)
    if "bench" not in c.skip:
        benchmarks(c, data_ok)
    if "train" in c.skip:
        return
    if not data_ok:
        for name in ("train alone", "train together", *(f"translate {m}" for m in TRANSLATED)):
            c.keep(steps.skipped(c.ledger, name, "a data stage did not run"))
        return
    logs = train_all(c)
    trained_words(c, logs)
    translated = translate_all(c)
    c.found.scores, c.found.signatures = score(
        translated, c.work / "results" / EXPERIMENT / "translate", c.work / "data" / EXPERIMENT / "prepared"
    )
