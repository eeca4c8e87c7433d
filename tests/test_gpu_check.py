"""scripts/gpu_check.sh: every step of the GPU check runs on a CPU at tiny size (``--cpu``, the long test below), in
the pipeline's order, each under its budget, and ends with one table; its parts (the order, the experiment, the
budgets, the time-boxed trainings, the log reading, the table) on their own."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from lsnmt.experiment.params import Params
from lsnmt.gpucheck import check, report, steps, trainings, trainlog
from lsnmt.gpucheck.order import ordered, producers, stages_for
from lsnmt.gpucheck.plan import TRAINED, TRANSLATED, check_params, cpu_plan, gpu_plan
from lsnmt.graph.stages import BY_NAME
from lsnmt.methods import resolve

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_check)


def test_the_stages_run_in_the_order_the_stage_tables_dependencies_give() -> None:
    exp = check_params(gpu_plan())["experiments"]["gpu_check"]
    names = [s.name for s in stages_for("translate", exp)]
    assert names == ["download", "prepare", "spm", "sample", "encode", "train", "translate"]
    for i, name in enumerate(names):  # every stage after all it reads from
        assert {p.name for p in producers(BY_NAME[name])} & set(names) <= set(names[:i]), name
    assert [s.name for s in ordered([BY_NAME[n] for n in reversed(names)])] == names
    # the table lists sample before spm, whose model it reads: a hand-written list in table order stops at sample
    assert "spm" in {p.name for p in producers(BY_NAME["sample"])}


def test_the_experiment_is_default_gpu_with_four_methods_and_the_cpu_plan_is_tiny(tmp_path: Path) -> None:
    full = Params.load(ROOT / "params.yaml").get("default_gpu")
    for plan, compile in ((gpu_plan(), "as-set"), (cpu_plan(), "cudagraphs")):
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump(check_params(plan, compile)), encoding="utf-8")
        params = Params.load(path)
        exp = params.get()
        assert exp.name == "gpu_check" and params.methods == TRAINED and set(TRANSLATED) <= set(TRAINED)
        assert {resolve(exp.method_cfg, m)[0] for m in TRAINED} == {None, "lms", "lsl", "lms_fd"}
        if plan.tiny:
            assert exp.model.embed_dim == 16 and exp.train.max_steps == 1000 and exp.train.compile == "cudagraphs"
            assert exp.model.encoder_layers == full.model.encoder_layers  # LSL's layout names layers 1 and 2
        else:
            assert exp.model == full.model and exp.data.languages == full.data.languages
            assert exp.train.max_steps == 3000 and exp.train.compile == full.train.compile
            assert exp.train.max_tokens == full.train.max_tokens and exp.train.precision == full.train.precision


def test_a_gpu_check_fits_its_8_minutes_whatever_each_step_takes() -> None:
    """The steps' caps may add up to more than the check's time: the ledger gives each what is left once the
    trainings' reserve is kept, so that the benchmarks shrink, not the check's end."""
    plan = gpu_plan()
    ledger = steps.Ledger(plan.total)
    ledger.start -= 200  # 200 s already spent
    reserve = check.train_reserve(plan)
    assert ledger.budget(plan.caps["throughput opus100"], reserve) == pytest.approx(plan.total - 200 - reserve, abs=1)
    assert plan.total - 200 - reserve < plan.caps["throughput opus100"]  # so it was squeezed
    roomy = steps.Ledger(plan.total)
    roomy.start -= 100  # 100 s spent: room enough for the host cost's cap
    assert roomy.budget(plan.caps["host cost"], reserve) == plan.caps["host cost"]
    assert plan.total + 15 == 8 * 60


def test_a_step_is_killed_at_its_budget(tmp_path: Path) -> None:
    said: list[str] = []
    ledger = steps.Ledger(60, say=said.append)
    cmd = [sys.executable, "-c", "import time; print('working', flush=True); time.sleep(60)"]
    out = steps.run(ledger, "sleeper", cmd, 1.0, tmp_path / "sleeper.log", tmp_path, steps.child_env(True))
    assert out.status == "timed out (killed at its 1 s budget)" and out.seconds < 30 and out.detail == "working"
    assert said[0].endswith("sleeper: budget 1 s")  # printed before it ran


FAKE = """
import logging, signal, sys, time
n, pause, log_every = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
logging.basicConfig(filename=sys.argv[4], level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log, stop = logging.getLogger("lsnmt.train.trainer"), []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
log.info(f"train: 1,000 parameters (1,000 trained), 2 directions, 10 pairs, {n:,} updates of 512 tokens x 1, "
         "device cpu, 1 threads, 1 rank(s)")
for step in range(1, n + 1):
    time.sleep(pause)
    if log_every and step % log_every == 0:
        log.info(f"step {step:05d}/{n:05d} | loss 1.000 | nll 1.000 | lr 1.0e-03 | tok/s 1")
    if stop:
        log.warning(f"stopped by SIGTERM after update {step}; checkpoint saved, the next run resumes from it")
        sys.exit(143)
"""


def fake_training(tmp_path: Path, name: str, updates: int, pause: float, log_every: int) -> trainings.Training:
    log = tmp_path / f"{name}.log"
    cmd = [sys.executable, "-c", FAKE, str(updates), str(pause), str(log_every), str(log)]
    return trainings.Training(name, log, steps.start(cmd, tmp_path / f"{name}.out", tmp_path, os.environ))


def test_a_time_boxed_group_is_stopped_together_finishes_early_or_is_killed(tmp_path: Path) -> None:
    slow = fake_training(tmp_path, "slow", 10_000, 0.01, 2)
    quick = fake_training(tmp_path, "quick", 4, 0.0, 2)
    group = [slow, quick]
    trainings.watch(group, box=1.0, grace=20, min_lines=3)
    got = {t.method: trainings.outcome(t, 1.0, 1.0) for t in group}
    assert got["quick"].status == "ok" and quick.read().reached == 4
    assert got["slow"].status == "stopped at its box" and slow.read().stopped == slow.read().reached >= 6
    silent = fake_training(tmp_path, "silent", 10_000, 0.01, 0)  # never logs a step: nothing to save, so killed
    slow_lines = fake_training(tmp_path, "slow_lines", 10_000, 0.05, 10)  # a line every 0.5 s, not the 100 asked
    trainings.watch([silent, slow_lines], box=0.5, grace=3.0, min_lines=100)
    assert trainings.outcome(silent, 3.5, 0.5).status.startswith("timed out")
    assert trainings.outcome(slow_lines, 3.5, 0.5).status == "stopped at its box"  # stopped at box + grace: saved
    assert slow_lines.read().stopped >= 10


def line(t: float, text: str) -> str:
    """A trainer's log line at ``t`` seconds past 10:00 (the logging module's time format)."""
    return f"2026-11-28 10:00:{t:06.3f} INFO lsnmt.train.trainer: {text}".replace(".", ",", 1)


def test_the_first_updates_the_rate_and_the_combined_rate_are_read_from_the_logs() -> None:
    start = "train: 9 parameters (9 trained), 16 directions, 1,000 pairs, 3,000 updates of 8,192 tokens x 1"
    a = trainlog.parse(
        "\n".join(
            [
                line(0.0, start + ", device cuda:0, 16 threads, 1 rank(s)"),
                *(line(2.0 + s / 10, f"step {s:05d}/03000 | loss 1") for s in (50, 100, 150, 200)),
                "2026-11-28 10:00:30,000 WARNING stages.train: stopped by SIGTERM after update 203",
            ]
        )
    )
    assert (a.first, a.total, a.stopped, a.reached) == (0, 3000, 203, 203)
    assert trainlog.first_updates(a, 100) == pytest.approx(12.0)
    assert trainlog.rate(a, 100) == pytest.approx(10.0)
    b = trainlog.parse(
        "\n".join(
            [
                line(5.0, start + ", resuming at update 40, device cuda:0, 16 threads, 1 rank(s)"),
                *(line(10.0 + (s - 50) / 20, f"step {s:05d}/03000 | loss 1") for s in (50, 250)),
            ]
        )
    )
    assert b.first == 40 and trainlog.first_updates(b, 10) == pytest.approx(5.0)
    rate, window, running = trainlog.combined([a, b])
    assert (window, running) == (pytest.approx(10.0), 2)  # from b's first line (10 s) to b's last (20 s)
    assert rate == pytest.approx(10.0 + 20.0)


def test_gpu_targets_say_n_a_on_a_cpu_and_a_signature_does_not_break_the_table() -> None:
    found = report.Findings(gpu=False, alone_rate=12.0, first=33.0, signatures="BLEU nrefs:1|case:mixed")
    rows = {r.figure: r for r in report.rows(found)}
    assert rows["naive alone: updates/s"].verdict == report.NA and rows["steps"].verdict == "met"
    assert report.rows(report.Findings(gpu=True, alone_rate=12.0))[3].verdict == "not met"
    assert "nrefs:1\\|case:mixed" in report.table(report.rows(found))


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU path")
def test_without_a_gpu_and_without_cpu_it_says_so_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gpu_check.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "**No GPU**" in out and "nothing that needs one ran" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_check.md"]  # no step logs: nothing else ran


@pytest.mark.long
@pytest.mark.timeout(900)
def test_every_step_runs_on_a_cpu_in_order_within_its_budget_and_ends_with_one_table(tmp_path: Path) -> None:
    """``scripts/gpu_check.sh --cpu``: the data stages in the table's order, the benchmarks (each method warmed up),
    naive alone, four trainings together stopped at their box and finished there, translations scored with their
    signatures, and one table last, every step ok."""
    env = {**os.environ, "PYTHON": sys.executable}
    out = tmp_path / "out"
    run = subprocess.run(
        [str(ROOT / "scripts" / "gpu_check.sh"), "--cpu", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=880,
    )
    text = run.stdout
    assert run.returncode == 0, text[-4000:] + run.stderr[-4000:]
    try:
        ran_every_step(text, out)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- the check's output ---\n{text[-6000:]}") from None


def ran_every_step(text: str, out: Path) -> None:
    started = re.findall(r"^\[ *\d+ s of \d+\] (.+?): budget \d+ s", text, re.M)
    data = [s for s in started if s in ("download", "prepare", "spm", "sample", "encode")]
    assert data == ["download", "prepare", "spm", "sample", "encode"]
    assert started.index("host cost") > started.index("encode") and started[-1].startswith("translate")
    assert "train alone: naive" in started and "train together: naive, lms, lsl_src_tgt, lms_fd" in started
    assert {f"finish {m}" for m in TRAINED} <= set(started)  # stopped at the box: each finished where it stopped
    final = text[text.index("## Figures and targets") :]
    assert final.rstrip().splitlines()[-1].startswith("| sacreBLEU signatures | BLEU nrefs:1\\|")  # the table ends it
    assert re.search(r"^\| steps \| \d+ ok \| all ok \| met \|$", final, re.M) and "| n/a (CPU) |" in final
    assert all(f"| {m}: BLEU / chrF (test, " in final for m in TRANSLATED)
    for name in ("throughput_default_gpu", "throughput_opus100"):
        rows = json.loads((out / f"{name}.json").read_text())["rows"]
        assert rows and all(r["warmup"] >= 5 and not r["error"] for r in rows), rows
    models = json.loads((out / "host_cost.json").read_text())["models"]
    assert [m for m in models if m.startswith("default_gpu")] and all(m["ops"] > 200 for m in models.values())
    assert all(m["trainer_calls"] > 0 and m["bare_calls"] > 0 for m in models.values())
    assert "Python calls per update" in final
    assert (out / "gpu_check.md").read_text().rstrip().endswith(final.rstrip())
    assert "===== train_together_lms_fd.log =====" in (out / "gpu_check.log").read_text()
