"""LM training jobs: equal token budgets, branching, HMR leaves the experts alone, bit-exact resume."""

from __future__ import annotations

import dataclasses
import math
import os
import signal
from pathlib import Path

import pytest
import torch

from lsnmt import paths as P
from lsnmt.data.fetch import file_digests
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.dist import Dist
from lsnmt.train.loop import Interrupted
from lsnmt.train.update import Updater
from lsnmt.xelm import jobs
from lsnmt.xelm import trainer as lm_trainer
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm

from .helpers import LM, experiment, make_clusters, make_lm_dir


@pytest.fixture()
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """cwd = a scratch repository with data/t/lm, results/t/xelm/cluster and a trained seed."""
    monkeypatch.chdir(tmp_path)
    exp = experiment()
    lm = make_lm_dir(Path("data/t"))
    clusters = make_clusters(Path("results/t/xelm"), lm)
    train_lm(jobs.seed_job(exp.xelm, lm), exp.xelm.lm, lm, load_meta(lm), P.at(P.LM_CKPT, "t", job="seed"),
             P.at(P.SEED, "t"))
    return exp, lm, clusters


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return ckpt.load(path)["model"]


def test_expert_sets_share_one_token_budget(workspace: tuple) -> None:
    exp, lm, clusters = workspace
    seed = P.at(P.SEED, "t") / "model.pt"
    dense = jobs.expert_job(exp.xelm, "dense-k1-e0", lm, clusters, seed)
    experts = [jobs.expert_job(exp.xelm, f"{a}-k2-e{e}", lm, clusters, seed) for a in ("tfidf", "typology")
               for e in range(2)]
    assert dense.batch_tokens == exp.xelm.experts.batch_tokens
    assert all(j.batch_tokens * 2 == dense.batch_tokens and j.train.updates == dense.train.updates for j in experts)
    assert set(experts[2].selection.docs) == {"en"} and set(experts[3].selection.docs) == {"de"}  # typology
    tf = experts[0].selection.docs  # TF-IDF expert 0: the even documents of both languages
    assert all((idx % 2 == 0).all() for idx in tf.values()) and set(tf) == {"en", "de"}


def test_branch_starts_from_the_parent(workspace: tuple) -> None:
    exp, lm, clusters = workspace
    seed = P.at(P.SEED, "t") / "model.pt"
    job = jobs.expert_job(exp.xelm, "typology-k2-e0", lm, clusters, seed)
    frozen = dataclasses.replace(job, train=dataclasses.replace(job.train, lr=0.0, warmup_updates=0))
    train_lm(frozen, exp.xelm.lm, lm, load_meta(lm), Path("work/frozen"), Path("results/frozen"))
    a, b = _weights(seed), _weights(Path("results/frozen/model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)  # lr 0: the branch is exactly the seed


def test_hmr_leaves_existing_experts_unchanged(workspace: tuple) -> None:
    exp, lm, clusters = workspace
    seed, meta = P.at(P.SEED, "t") / "model.pt", load_meta(lm)
    for e in range(2):
        name = f"typology-k2-e{e}"
        train_lm(jobs.expert_job(exp.xelm, name, lm, clusters, seed), LM, lm, meta, P.at(P.LM_CKPT, "t", job=name),
                 P.at(P.EXPERT, "t", expert=name))
    donor = P.at(P.EXPERT, "t", expert=jobs.donor_expert(exp.xelm, clusters, "sw")) / "model.pt"
    assert donor.parent.name == "typology-k2-e1"  # the expert of de, sw's donor
    before = {p: file_digests(p)["sha256"] for p in Path("results/t/xelm/experts").rglob("*") if p.is_file()}
    job = jobs.hmr_job(exp.xelm, exp.name, exp.lm_data.targets, "sw", lm, clusters)
    assert job.init == donor and set(job.selection.docs) == {"de", "sw"}
    info = train_lm(job, LM, lm, meta, P.at(P.LM_CKPT, "t", job="hmr-sw"), P.at(P.HMR, "t", target="sw"))
    after = {p: file_digests(p)["sha256"] for p in Path("results/t/xelm/experts").rglob("*") if p.is_file()}
    assert before == after
    assert info["init"] == str(donor)
    hmr, old = _weights(P.at(P.HMR, "t", target="sw") / "model.pt"), _weights(donor)
    assert any(not torch.equal(hmr[k], old[k]) for k in old)  # the new expert did train


def test_interrupted_training_resumes_bit_exactly(workspace: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    exp, lm, clusters = workspace
    seed, meta = P.at(P.SEED, "t") / "model.pt", load_meta(lm)
    job = jobs.expert_job(exp.xelm, "dense-k1-e0", lm, clusters, seed)
    train_lm(job, LM, lm, meta, Path("work/a"), Path("results/a"))
    real, calls = lm_trainer._update, {"n": 0}

    def crash_after_three(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(lm_trainer, "_update", crash_after_three)
    with pytest.raises(KeyboardInterrupt):
        train_lm(job, LM, lm, meta, Path("work/b"), Path("results/b"))
    assert not Path("results/b").exists() and ckpt.load(Path("work/b/last.pt"))["step"] == 2
    monkeypatch.setattr(lm_trainer, "_update", real)
    train_lm(job, LM, lm, meta, Path("work/b"), Path("results/b"))
    a, b = _weights(Path("results/a/model.pt")), _weights(Path("results/b/model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert Path("results/a/curve.tsv").read_text() == Path("results/b/curve.tsv").read_text()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGUSR1])
def test_a_stop_signal_saves_and_the_rerun_resumes_bit_exactly(workspace: tuple, monkeypatch: pytest.MonkeyPatch,
                                                               signum: int) -> None:
    """SLURM preemption of an expert job: the signal arrives during update 3 (save_every 2), the job writes
    ``last.pt`` at update 3 and raises; the rerun ends where an uninterrupted run does, curve included."""
    exp, lm, clusters = workspace
    seed, meta = P.at(P.SEED, "t") / "model.pt", load_meta(lm)
    job = jobs.expert_job(exp.xelm, "typology-k2-e0", lm, clusters, seed)
    assert job.train.save_every == 2 and job.train.updates == 4
    train_lm(job, LM, lm, meta, Path("work/a"), Path("results/a"))
    real, calls = lm_trainer._update, {"n": 0}

    def signalled_in_update_three(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            os.kill(os.getpid(), signum)  # handled between updates: this one completes
        return real(*args, **kwargs)

    monkeypatch.setattr(lm_trainer, "_update", signalled_in_update_three)
    with pytest.raises(Interrupted) as stopped:
        train_lm(job, LM, lm, meta, Path("work/b"), Path("results/b"))
    assert (stopped.value.signum, stopped.value.step) == (signum, 3)
    assert not Path("results/b").exists() and ckpt.load(Path("work/b/last.pt"))["step"] == 3
    monkeypatch.setattr(lm_trainer, "_update", real)
    train_lm(job, LM, lm, meta, Path("work/b"), Path("results/b"))
    a, b = _weights(Path("results/a/model.pt")), _weights(Path("results/b/model.pt"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert Path("results/a/curve.tsv").read_text() == Path("results/b/curve.tsv").read_text()


def test_a_stopped_stage_exits_with_128_plus_the_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    from lsnmt.runner.base import guarded

    def stopped() -> None:
        raise Interrupted(signal.SIGTERM, 3)

    with pytest.raises(SystemExit) as exc:
        guarded("lm_expert", stopped)
    assert exc.value.code == 128 + signal.SIGTERM


def test_optimizer_defaults_are_the_released_sweep() -> None:
    """x-elm's paper gives no optimizer settings: blvns/x-elm's metaseq/fb_sweep/ft_stream.py (as train_xlbtm.sh
    runs it) sets Adam betas (0.9, 0.95), eps 1e-6, no weight decay, clip 1.0, fp16 from a loss scale of 128."""
    from lsnmt.experiment.params import Params
    from lsnmt.xelm.config import LMTrainConfig

    cfg = LMTrainConfig(updates=1, batch_tokens=8, lr=1e-4)
    assert (tuple(cfg.adam_betas), cfg.adam_eps, cfg.weight_decay, cfg.clip_norm, cfg.fp16_init_scale) == (
        (0.9, 0.95), 1e-6, 0.0, 1.0, 128.0)
    xelm = Params.load(Path(__file__).resolve().parents[2] / "params.yaml").get("mc4_xelm").xelm
    assert xelm is not None
    for job in (xelm.experts, xelm.hmr):
        assert (job.precision, tuple(job.adam_betas), job.adam_eps, job.weight_decay) == ("fp16", (0.9, 0.95), 1e-6,
                                                                                         0.0)


def test_an_fp16_overflow_skips_the_update() -> None:
    """When a scaled gradient overflows (here forced by a hook), the scaler skips the step (the weights stay as
    they were), halves its scale and the update reports ``skipped`` (the loop does not count it); the next, finite
    update steps."""
    from lsnmt.xelm.config import LMTrainConfig

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(11, 8), torch.nn.Linear(8, 11))
    cfg = LMTrainConfig(updates=4, batch_tokens=16, lr=0.1, precision="fp16")
    job = lm_trainer.LMJob(name="t", train=cfg, batch_tokens=16, selection=None)  # type: ignore[arg-type]
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=cfg.fp16_init_scale)  # enabled: the GPU's path on a CPU
    t = Updater(model=model, net=model, optimizer=opt, scaler=scaler, dist=Dist(0, 1, torch.device("cpu"), False),
                ddp=None, precision="fp16", clip_norm=cfg.clip_norm)
    before = [p.detach().clone() for p in model.parameters()]
    blocks = torch.randint(1, 11, (2, 9))
    hook = model[1].weight.register_hook(lambda g: g * math.inf)
    done = lm_trainer._update(t, blocks, job, 0, 0, 16, lm_trainer.schedule(job.train).at(0))
    assert done.skipped and done.ntokens == 16 and scaler.get_scale() == pytest.approx(64.0)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    hook.remove()
    done = lm_trainer._update(t, blocks, job, 0, 1, 16, lm_trainer.schedule(job.train).at(1))
    assert not done.skipped and any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_lm_updates_between_two_checks_never_synchronise() -> None:
    """Five LM updates (two micro-batches each, clipped) through the shared update and the loop with one check,
    after the last: the only read of a device value is that check's one copy (loop.py), none per update (the
    nll is no longer read per micro-batch). The optimizer is fused, as on a GPU (a non-fused AdamW reads its CPU
    step counters, host values on a GPU too)."""
    from lsnmt.train.curve import Meters
    from lsnmt.train.loop import Job, run_updates
    from lsnmt.train.optim import build_optimizer
    from lsnmt.train.update import updater
    from lsnmt.xelm.config import LMTrainConfig
    from models.lm import build_lm
    from models.syncs import count_syncs

    from .helpers import PAD, VOCAB

    torch.manual_seed(0)
    cfg = LMTrainConfig(updates=100, batch_tokens=32, lr=1e-3, max_tokens=16, clip_norm=1.0)
    job = lm_trainer.LMJob(name="t", train=cfg, batch_tokens=32, selection=None)  # type: ignore[arg-type]
    model = build_lm(LM, vocab_size=VOCAB, padding_idx=PAD)
    t = updater(model, build_optimizer(model.parameters(), cfg, fused=True), Dist(0, 1, torch.device("cpu"), False),
                clip_norm=cfg.clip_norm)
    blocks = torch.randint(4, VOCAB, (4, LM.block_size + 1))
    rate = lm_trainer.schedule(cfg).at
    for n in range(2):  # warm-up: first-call work is not steady state
        lm_trainer._update(t, blocks, job, PAD, n, 32, rate(n))
    loop = Job(name="t", total=7, log_every=10**6, save_every=10**6,
               update=lambda n: lm_trainer._update(t, blocks, job, PAD, n, 32, rate(n)), save=lambda _n, **_kw: None)
    with count_syncs() as syncs:
        assert run_updates(loop, 2, Meters()) == 7
    assert [what for what, _ in syncs.events] == ["tolist"], syncs.report()
    assert syncs.events[0][1].startswith("train/loop.py:"), syncs.report()


def test_a_non_finite_loss_stops_the_job_at_the_next_check(workspace: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """A NaN nll in update 3 (log_every = save_every = 2): the loop's guard names update 3 at its check after update
    4, before that update's save; ``last.pt`` stays the one of update 2 (the nll is no longer read per batch)."""
    exp, lm, clusters = workspace
    job = jobs.expert_job(exp.xelm, "dense-k1-e0", lm, clusters, P.at(P.SEED, "t") / "model.pt")
    real, calls = lm_trainer.smoothed_cross_entropy, {"n": 0}

    def nan_in_update_three(*args, **kwargs):
        calls["n"] += 1
        loss, nll = real(*args, **kwargs)
        return (loss, nll * math.nan) if calls["n"] == 3 else (loss, nll)

    monkeypatch.setattr(lm_trainer, "smoothed_cross_entropy", nan_in_update_three)
    with pytest.raises(FloatingPointError, match="step 3: training loss is nan"):
        train_lm(job, LM, lm, load_meta(lm), Path("work/nan"), Path("results/nan"))
    assert ckpt.load(Path("work/nan/last.pt"))["step"] == 2 and not Path("results/nan").exists()
