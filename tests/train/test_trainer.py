"""The training loop on CPU: determinism, outputs, logs, resume rules and the NaN guard."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
import torch
from torch import Tensor, nn

from lsnmt.data.corpus import Vocab, collate, load_split
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.batching import BatchStream, Pool
from lsnmt.train.feed import batch_seed
from lsnmt.train.loss import sequence_loss
from lsnmt.train.trainer import train
from models.build import build_transformer
from models.lang import LangContext
from tests.train.helpers import assert_equal_weights, make_bin, tiny_experiment, weights

LINE = re.compile(r"^step (\d{5})/(\d{5}) \| loss (\d+\.\d{3}) \| nll (\d+\.\d{3}) \| lr (\d\.\de[-+]\d\d) "
                  r"\| tok/s (\d+)$")


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bin(tmp_path_factory.mktemp("bin"))


def run(bin_dir: Path, root: Path, **train_cfg: object) -> dict:
    return train(tiny_experiment(**train_cfg), bin_dir, root / "out", root / "work")


def test_two_runs_give_bitwise_equal_weights(bin_dir: Path, tmp_path: Path) -> None:
    a, b = run(bin_dir, tmp_path / "a"), run(bin_dir, tmp_path / "b")
    assert a == b
    assert_equal_weights(weights(tmp_path / "a/work/last.pt"), weights(tmp_path / "b/work/last.pt"))
    assert_equal_weights(weights(tmp_path / "a/out/model.pt"), weights(tmp_path / "b/out/model.pt"))


def test_outputs_log_lines_and_curve(bin_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="lsnmt.train.trainer"):
        result = run(bin_dir, tmp_path)
    lines = [m for r in caplog.records if (m := LINE.match(r.getMessage()))]
    assert [int(m.group(1)) for m in lines] == [2, 3, 4, 6]  # log_every 2, validate_every 3, max_steps 6
    assert all(int(m.group(2)) == 6 for m in lines)
    rows = [r.split("\t") for r in (tmp_path / "out/curve.tsv").read_text().splitlines()]
    assert rows[0] == ["step", "loss", "nll", "lr", "valid_loss"]
    assert [r[0] for r in rows[1:]] == ["2", "3", "4", "6"]
    assert [bool(r[4]) for r in rows[1:]] == [False, True, False, True]
    assert float(rows[-1][4]) == pytest.approx(min(float(rows[2][4]), float(rows[4][4])))
    assert result["step"] == 6 and set(result["valid"]) == {"en-de", "en-fr", "de-en", "fr-en"}
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["curve.tsv", "model.pt"]
    assert [n for n, _ in ckpt.step_checkpoints(tmp_path / "work")] == [3, 6]  # keep_last 2
    model = torch.load(tmp_path / "out/model.pt", weights_only=True)
    assert model["source"] == "best" and model["config"]["languages"] == ["en", "de", "fr"]
    assert_equal_weights(model["model"], weights(tmp_path / "work/best.pt"))


def test_extending_max_steps_resumes_to_the_same_weights(bin_dir: Path, tmp_path: Path) -> None:
    run(bin_dir, tmp_path / "once", max_steps=9)
    run(bin_dir, tmp_path / "twice", max_steps=5)
    again = run(bin_dir, tmp_path / "twice", max_steps=9)
    assert again["step"] == 9
    assert_equal_weights(weights(tmp_path / "once/work/last.pt"), weights(tmp_path / "twice/work/last.pt"))
    steps = [r.split("\t")[0] for r in (tmp_path / "twice/out/curve.tsv").read_text().splitlines()[1:]]
    assert steps == ["2", "3", "4", "5", "6", "8", "9"]  # step 5 was the first call's final step


def test_changed_settings_start_afresh(bin_dir: Path, tmp_path: Path) -> None:
    run(bin_dir, tmp_path, max_steps=3)
    result = run(bin_dir, tmp_path, max_steps=3, lr=2e-3)
    assert result["step"] == 3
    assert (tmp_path / "work.stale/last.pt").is_file()
    assert not torch.equal(weights(tmp_path / "work.stale/last.pt")["encoder.embed.tokens.weight"],
                           weights(tmp_path / "work/last.pt")["encoder.embed.tokens.weight"])


def test_average_of_last_checkpoints_as_final_model(bin_dir: Path, tmp_path: Path) -> None:
    exp = tiny_experiment(final_checkpoint="average", average_last=2, save_every=2, keep_last=3)
    train(exp, bin_dir, tmp_path / "out", tmp_path / "work")
    model = torch.load(tmp_path / "out/model.pt", weights_only=True)
    assert model["source"] == "average of step4.pt, step6.pt"
    a, b = weights(tmp_path / "work/step4.pt"), weights(tmp_path / "work/step6.pt")
    assert torch.equal(model["model"]["encoder.embed.tokens.weight"],
                       (a["encoder.embed.tokens.weight"] + b["encoder.embed.tokens.weight"]) / 2)


class NaNAfter(nn.Module):
    """The tiny Transformer, whose logits turn to NaN from the ``k``-th forward on."""

    def __init__(self, inner: nn.Module, k: int) -> None:
        super().__init__()
        self.inner, self.k, self.calls = inner, k, 0

    def forward(self, src: Tensor, prev: Tensor, langs: LangContext) -> Tensor:
        self.calls += 1
        out = self.inner(src, prev, langs)
        return out * float("nan") if self.calls >= self.k else out


def test_nan_guard_names_the_step_and_writes_no_nan_checkpoint(bin_dir: Path, tmp_path: Path) -> None:
    def factory(cfg, **kw):
        return NaNAfter(build_transformer(cfg, **kw), k=3)

    exp = tiny_experiment(save_every=1, validate_every=100)
    with pytest.raises(FloatingPointError, match=r"^step 3: training loss is nan"):
        train(exp, bin_dir, tmp_path / "out", tmp_path / "work", model_factory=factory)
    assert [n for n, _ in ckpt.step_checkpoints(tmp_path / "work")] == [1, 2]
    last = ckpt.load(tmp_path / "work/last.pt")
    assert last["step"] == 2 and all(torch.isfinite(v).all() for v in last["model"].values())
    assert not (tmp_path / "out").exists()


def first_moment_as_gradient(path: Path, beta1: float) -> list[Tensor]:
    """Adam's ``exp_avg`` after one update is ``(1 - beta1) g``: read ``g`` back, in parameter order."""
    state = ckpt.load(path)["optimizer"]["state"]
    return [state[i]["exp_avg"] / (1 - beta1) for i in sorted(state)]


def test_update_gradient_is_the_token_mean_of_the_summed_loss(bin_dir: Path, tmp_path: Path) -> None:
    """g = (1/N) sum_b grad L(b) over the update's micro-batches, N their target tokens (fairseq)."""
    exp = tiny_experiment(max_steps=1, update_freq=3, save_every=1)
    train(exp, bin_dir, tmp_path / "out", tmp_path / "work")
    cfg, vocab = exp.train, Vocab.load(bin_dir)
    dirs = load_split(bin_dir, "train", exp.data.train_pairs, vocab)
    torch.manual_seed(cfg.seed)
    model = build_transformer(exp.model, vocab_size=vocab.size, num_languages=3, padding_idx=vocab.pad)
    ntokens = 0
    for batch in BatchStream(Pool.build(dirs, cfg), cfg, cfg.seed).take(3):
        torch.manual_seed(batch_seed(cfg.seed, batch))
        s = collate(dirs, batch.rows, vocab)
        loss, _, n = sequence_loss(model(s.src_tokens, s.prev_output_tokens, s.langs), s.target,
                                   cfg.label_smoothing, vocab.pad)
        loss.backward()
        ntokens += n
    got = first_moment_as_gradient(tmp_path / "work/step1.pt", cfg.adam_betas[0])
    for g, p in zip(got, model.parameters(), strict=True):
        torch.testing.assert_close(g, p.grad / ntokens, rtol=0, atol=1e-7)


class WithAux(nn.Module):
    """The tiny Transformer plus an auxiliary loss ``c * sum(token embeddings)``."""

    def __init__(self, inner: nn.Module, c: float) -> None:
        super().__init__()
        self.inner, self.c = inner, c

    def forward(self, src: Tensor, prev: Tensor, langs: LangContext) -> Tensor:
        return self.inner(src, prev, langs)

    def aux_loss(self) -> Tensor:
        return self.c * self.inner.encoder.embed.tokens.weight.sum()


def test_aux_loss_enters_the_gradient_once_per_update(bin_dir: Path, tmp_path: Path) -> None:
    exp = tiny_experiment(max_steps=1, update_freq=2, save_every=1)

    def factory(cfg, **kw):
        return WithAux(build_transformer(cfg, **kw), c=0.25)

    train(exp, bin_dir, tmp_path / "plain/out", tmp_path / "plain/work")
    train(exp, bin_dir, tmp_path / "aux/out", tmp_path / "aux/work", model_factory=factory)
    beta1 = exp.train.adam_betas[0]
    plain = first_moment_as_gradient(tmp_path / "plain/work/step1.pt", beta1)[0]  # the shared embedding
    aux = first_moment_as_gradient(tmp_path / "aux/work/step1.pt", beta1)[0]
    torch.testing.assert_close(aux - plain, torch.full_like(plain, 0.25), rtol=0, atol=1e-6)


@pytest.mark.parametrize("mode", ["none", "default", "reduce-overhead", "cudagraphs"])
def test_compile_option_wraps_the_forward(bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          mode: str) -> None:
    """``train.compile`` hands the model to ``torch.compile`` (replaced here by a recorder: compiling is slow on a
    CPU; ``tests/train/test_compile.py`` compiles for real) with the mode's options on a CPU, and trains through
    what it returns; the checkpoints hold the bare model's keys."""
    compiled: list[tuple[nn.Module, dict]] = []

    def record(module: nn.Module, **options: object) -> nn.Module:
        compiled.append((module, options))
        return module

    monkeypatch.setattr(torch, "compile", record)
    result = run(bin_dir, tmp_path, max_steps=2, compile=mode)
    assert result["step"] == 2 and len(compiled) == int(mode != "none")
    if mode != "none":  # on a CPU: no CUDA graphs (reduce-overhead compiles as default, cudagraphs traces aot_eager)
        expected = {"backend": "aot_eager"} if mode == "cudagraphs" else {"mode": "default"}
        assert compiled[0][1] == {**expected, "dynamic": True}
    assert all(not k.startswith("_orig_mod") for k in weights(tmp_path / "work/last.pt"))
