"""Fine-tuning units on the embedded fixtures: the tiny model can learn each task (machinery), interrupted
training resumes bit for bit, a changed config restarts, and task_eval averages seeds and counts wins."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
from pathlib import Path

import pytest
import torch

from lsnmt.tasks import train as train_mod
from lsnmt.tasks.config import EncoderConfig, TaskConfig, TaskSource
from lsnmt.tasks.prep import prep_task
from lsnmt.tasks.scoring import evaluate_task, score
from lsnmt.tasks.train import Prepared, Unit, run_unit
from lsnmt.train.loop import Interrupted
from models.ls.lms import LMSFDConfig

FIX = Path(__file__).resolve().parents[2] / "embedded" / "tasks"
ENC = EncoderConfig(init="random", hidden_size=32, layers=2, heads=2, ffn_dim=64, vocab_size=300)
CPU = torch.device("cpu")


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def _ner(tmp: Path, **kw) -> tuple[TaskConfig, Prepared]:
    args = {"epochs": 2, "batch_size": 8, "lr": 2e-3, "max_length": 32, "seeds": (1,), "select": "best", **kw}
    task = TaskConfig(kind="ner", languages=("en", "fr"), source=TaskSource(kind="wikiann"), encoder=ENC, **args)
    prep_task("wikiann", task, FIX / "wikiann", tmp / "prep")
    return task, Prepared.load(tmp / "prep")


def test_ner_unit_can_fit_its_training_data(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    for lang in ("en", "fr"):  # test on the training sentences: the pipeline must be able to fit them
        (raw / lang).mkdir(parents=True)
        for split in ("train", "dev", "test"):
            shutil.copy(FIX / "wikiann" / lang / "train", raw / lang / split)
    task = TaskConfig(kind="ner", languages=("en", "fr"), source=TaskSource(kind="wikiann"), encoder=ENC, epochs=25,
                      batch_size=8, lr=3e-3, max_length=32, seeds=(1,), select="last")
    prep_task("wikiann", task, raw, tmp_path / "prep")
    prepared = Prepared.load(tmp_path / "prep")
    result = run_unit(Unit("wikiann", task, "naive", None, None, 1, tmp_path / "work"), prepared, CPU)
    for lang in task.languages:
        gold = [r["tags"] for r in prepared.splits["test"][lang]]
        assert score("ner", gold, result["predictions"]["none"][lang])["f1"] > 80.0, lang


def test_qa_unit_can_fit_its_training_questions(tmp_path: Path) -> None:
    data = json.loads((FIX / "tydiqa" / "tydiqa-goldp-v1.1-train.json").read_text(encoding="utf-8"))
    small = {"data": [a for a in data["data"] if a["paragraphs"][0]["qas"][0]["id"].startswith("english")][:2]}
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("train", "dev"):
        (raw / f"tydiqa-goldp-v1.1-{name}.json").write_text(json.dumps(small), encoding="utf-8")
    task = TaskConfig(kind="qa", languages=("en",), source=TaskSource(kind="tydiqa"), encoder=ENC, epochs=60,
                      batch_size=4, lr=3e-3, max_length=48, doc_stride=16, max_query_length=16, seeds=(1,))
    meta = prep_task("tydiqa", task, raw, tmp_path / "prep")
    assert meta["counts"]["train"]["en"]["windows"] > 4  # the long passage spans several windows
    prepared = Prepared.load(tmp_path / "prep")
    result = run_unit(Unit("tydiqa", task, "naive", None, None, 1, tmp_path / "work"), prepared, CPU)
    gold = {qid: g["answers"] for qid, g in prepared.gold["en"].items()}
    assert score("qa", gold, result["predictions"]["none"]["en"])["f1"] > 70.0


class Stop(Exception):
    pass


def test_interrupted_unit_resumes_bit_for_bit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task, prepared = _ner(tmp_path, epochs=3)
    cfg = LMSFDConfig(rank=2, synthesis="language", route="share")
    full = run_unit(Unit("wikiann", task, "lms_fd", "lms_fd", cfg, 1, tmp_path / "a"), prepared, CPU)
    assert full["routes"] == ["share", "ls"] and set(full["predictions"]) == {"share", "ls"}

    real_save, saves = train_mod.ckpt.save, []

    def save_then_stop(path: Path, state: dict) -> None:
        real_save(path, state)
        saves.append(path.name)
        if saves.count("last.pt") == 1:
            raise Stop  # killed right after epoch 1

    monkeypatch.setattr(train_mod.ckpt, "save", save_then_stop)
    with pytest.raises(Stop):
        run_unit(Unit("wikiann", task, "lms_fd", "lms_fd", cfg, 1, tmp_path / "b"), prepared, CPU)
    monkeypatch.setattr(train_mod.ckpt, "save", real_save)
    resumed = run_unit(Unit("wikiann", task, "lms_fd", "lms_fd", cfg, 1, tmp_path / "b"), prepared, CPU)
    assert resumed["curve"] == full["curve"] and resumed["predictions"] == full["predictions"]
    assert resumed["params"] == full["params"] and full["params"]["inference"]["share"] < full["params"]["train"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGUSR1])
def test_a_stop_signal_mid_epoch_saves_and_the_rerun_resumes_bit_for_bit(tmp_path: Path, signum: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """SLURM preemption during epoch 2: the unit saves ``last.pt`` after the batch in progress (with the epoch's
    running loss) and raises; the rerun resumes inside the epoch and ends where an uninterrupted run does."""
    task, prepared = _ner(tmp_path, epochs=2)
    full = run_unit(Unit("wikiann", task, "naive", None, None, 1, tmp_path / "a"), prepared, CPU)
    real, calls = train_mod.batch_loss, {"n": 0}
    n_batches = full["curve"][0]["step"]
    at = n_batches + 2  # the second batch of epoch 2

    def signalled(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == at:
            os.kill(os.getpid(), signum)  # handled between updates: this batch completes
        return real(*args, **kwargs)

    monkeypatch.setattr(train_mod, "batch_loss", signalled)
    with pytest.raises(Interrupted) as stopped:
        run_unit(Unit("wikiann", task, "naive", None, None, 1, tmp_path / "b"), prepared, CPU)
    assert (stopped.value.signum, stopped.value.step) == (signum, at)
    saved = torch.load(tmp_path / "b" / "last.pt", weights_only=True)
    assert saved["running"]["batches"] == 2 and saved["state"]["epoch"] == 1
    assert not (tmp_path / "b" / "result.json").exists()
    monkeypatch.setattr(train_mod, "batch_loss", real)
    resumed = run_unit(Unit("wikiann", task, "naive", None, None, 1, tmp_path / "b"), prepared, CPU)
    assert resumed["curve"] == full["curve"] and resumed["predictions"] == full["predictions"]
    a, b = (torch.load(tmp_path / r / "last.pt", weights_only=True)["model"] for r in ("a", "b"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_changed_config_restarts_the_unit(tmp_path: Path) -> None:
    task, prepared = _ner(tmp_path)
    work = tmp_path / "w"
    first = run_unit(Unit("wikiann", task, "naive", None, None, 1, work), prepared, CPU)
    assert run_unit(Unit("wikiann", task, "naive", None, None, 1, work), prepared, CPU) == first  # reused
    changed = dataclasses.replace(task, lr=5e-3)
    again = run_unit(Unit("wikiann", changed, "naive", None, None, 1, work), prepared, CPU)
    assert again["curve"] != first["curve"]
    assert json.loads((work / "config.json").read_text())["task_cfg"]["lr"] == 5e-3
    stale = tmp_path / "w.stale"  # the earlier run is moved aside, as the translation trainer does, not deleted
    assert json.loads((stale / "config.json").read_text())["task_cfg"]["lr"] == task.lr
    assert json.loads((stale / "result.json").read_text()) == first


def test_a_unit_recorded_without_a_fingerprint_is_reused(tmp_path: Path) -> None:
    """A work dir written before work dirs carried a fingerprint (config.json = the unit's config) is the same unit:
    its result is reused, not moved aside."""
    task, prepared = _ner(tmp_path, epochs=1)
    unit = Unit("wikiann", task, "naive", None, None, 1, tmp_path / "w")
    first = run_unit(unit, prepared, CPU)
    (unit.work / "config.json").write_text(json.dumps(unit.config(prepared)), encoding="utf-8")
    (unit.work / "result.json").write_text(json.dumps({**first, "marker": 1}), encoding="utf-8")
    assert run_unit(unit, prepared, CPU)["marker"] == 1 and not (tmp_path / "w.stale").exists()


def test_a_non_finite_loss_stops_the_unit_before_any_checkpoint_of_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN loss in the third batch of epoch 1: the loop's guard raises at the epoch's check, before the epoch's
    end writes ``best.pt`` or ``last.pt`` (the loss is no longer read per batch)."""
    task, prepared = _ner(tmp_path)
    real, calls = train_mod.batch_loss, {"n": 0}

    def nan_at_three(*args, **kwargs):
        calls["n"] += 1
        loss = real(*args, **kwargs)
        return loss * float("nan") if calls["n"] == 3 else loss

    monkeypatch.setattr(train_mod, "batch_loss", nan_at_three)
    with pytest.raises(FloatingPointError, match="step 3: training loss is nan"):
        run_unit(Unit("wikiann", task, "naive", None, None, 1, tmp_path / "w"), prepared, CPU)
    assert not (tmp_path / "w" / "last.pt").exists() and not (tmp_path / "w" / "best.pt").exists()


def test_task_eval_averages_seeds_and_counts_wins(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "test").mkdir(parents=True)
    (data / "meta.json").write_text(json.dumps({"kind": "ner", "languages": ["en", "fr"]}))
    gold = {"en": [["B-PER", "O"], ["B-LOC", "O"]], "fr": [["B-ORG", "O"]]}
    for lang, tags in gold.items():
        (data / "test" / f"{lang}.jsonl").write_text("".join(json.dumps({"tags": t}) + "\n" for t in tags))
    right, wrong = gold, {"en": [["O", "O"], ["B-LOC", "O"]], "fr": [["O", "O"]]}

    def write(method: str, seed: int, routes: dict) -> None:
        d = tmp_path / "res" / method / f"seed{seed}"
        d.mkdir(parents=True)
        (d / "predictions.json").write_text(json.dumps({"seed": seed, "routes": list(routes), "predictions": routes,
                                                        "params": {"train": 10, "inference": {r: 9 for r in routes}}}))

    write("naive", 1, {"none": wrong})
    write("naive", 2, {"none": right})
    write("lms_fd", 1, {"share": right, "ls": wrong})
    write("lms_fd", 2, {"share": right, "ls": wrong})
    got = evaluate_task("wikiann", data, tmp_path / "res")
    naive = got["methods"]["naive"]["routes"]["none"]
    # en: seed 1 finds 1 of 2 entities (P 1, R 1/2 -> 66.67), seed 2 all (100); fr: 0 and 100
    assert naive["scores"] == pytest.approx({"en": (200 / 3 + 100) / 2, "fr": 50.0})
    share, ls = (got["methods"]["lms_fd"]["routes"][r] for r in ("share", "ls"))
    assert share["avg"] == 100.0 and share["win_ratio"] == 100.0 and ls["win_ratio"] == 0.0
    assert got["methods"]["lms_fd"]["primary"] == "share" and naive["win_ratio"] == 0.0


def test_task_updates_read_nothing_from_the_device_but_the_encoders_mask_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three steady-state updates of a unit (its own update hook, the shared update step) read no device value
    of theirs: no loss, no finiteness check, no label count. What remains is the XLM-R encoder's own check
    (Hugging Face's ``padding_mask.all()`` before SDPA, ``transformers/masking_utils.py``: one per forward, in
    ``models/xlmr.py``'s call, outside the update). The optimizer is fused, as on a GPU."""
    from models.syncs import count_syncs

    task, prepared = _ner(tmp_path)
    unfused = train_mod.adam
    monkeypatch.setattr(train_mod, "adam", lambda t: dataclasses.replace(unfused(t), fused=True))
    seen: dict = {}

    def probe(job, step, meters, curve) -> int:
        for n in range(2):  # warm-up: first-call work is not steady state
            job.update(n)
        with count_syncs() as syncs:
            for n in range(2, 5):
                job.update(n)
        seen["syncs"] = syncs
        raise Stop

    monkeypatch.setattr(train_mod, "run_updates", probe)
    with pytest.raises(Stop):
        run_unit(Unit("wikiann", task, "naive", None, None, 1, tmp_path / "w"), prepared, CPU)
    syncs = seen["syncs"]
    assert all(where.startswith("transformers/masking_utils.py:") for _, where in syncs.events), syncs.report()
    assert len(syncs.events) <= 3, syncs.report()  # at most the encoder's one per forward
