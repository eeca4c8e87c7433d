"""Shared artifacts are safe: model.pt loads without running code; outputs honour the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch

from lsnmt.data.corpus import Vocab
from lsnmt.experiment.params import Params
from lsnmt.io import DataError, atomic_dir, atomic_write, write_json
from lsnmt.methods import record, resolve
from lsnmt.train import checkpoint
from lsnmt.train.trainer import _config
from models.build import build_transformer
from tests.eval.helpers import loaded

ROOT = Path(__file__).resolve().parent.parent
VOCAB = Vocab(size=40, pad=1, eos=2, languages=("en", "de", "sw"))


@pytest.fixture(scope="module")
def exp():
    return Params.load(ROOT / "tests/fixtures/params.tiny.yaml").get()


class _Payload:
    """Unpickling this calls ``Path.touch`` on ``marker``: code a model.pt must never run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_pickled_code_in_model_pt_does_not_run(tmp_path: Path, exp) -> None:
    marker = tmp_path / "payload-ran"
    model = build_transformer(exp.model, vocab_size=VOCAB.size, num_languages=3, padding_idx=VOCAB.pad)
    torch.save({"model": model.state_dict(), "config": {"method": _Payload(marker)}}, tmp_path / "model.pt")
    with pytest.raises(DataError, match=r"model\.pt: not a plain checkpoint of tensors, refused \(.*GLOBAL"):
        loaded(exp, "naive", tmp_path / "model.pt", VOCAB)
    assert not marker.exists()


def test_trained_model_pt_loads_weights_only(tmp_path: Path, exp) -> None:
    """What the trainer writes (tensors, its config as plain types, the method record) loads safely."""
    kind, cfg = resolve(exp.method_cfg, "lms")
    model = build_transformer(exp.model, vocab_size=VOCAB.size, num_languages=3, padding_idx=VOCAB.pad,
                              method=kind, method_cfg=cfg)
    config = _config(exp, VOCAB, "fingerprint", record("lms", kind, cfg))
    checkpoint.save(tmp_path / "model.pt", {"model": model.state_dict(), "config": config, "step": 3,
                                            "source": "best"})
    net = loaded(exp, "lms", tmp_path / "model.pt", VOCAB)
    for name, value in model.state_dict().items():
        assert torch.equal(net.state_dict()[name], value), name


def test_a_damaged_model_pt_is_refused_in_one_line(tmp_path: Path, exp) -> None:
    """A bit flipped in a weight: the old code translated with the other weights (rc 0)."""
    from tests.train.test_damaged import flip_tensor_bit

    model = build_transformer(exp.model, vocab_size=VOCAB.size, num_languages=3, padding_idx=VOCAB.pad)
    state = model.state_dict()
    checkpoint.save(tmp_path / "model.pt", {"model": state, "config": _config(exp, VOCAB, "f", None), "step": 3})
    flip_tensor_bit(tmp_path / "model.pt", state["encoder.embed.tokens.weight"])
    with pytest.raises(DataError, match=r"model\.pt: damaged, its content differs from what was written \(sha256 "
                                        r"mismatch\); rerun the train stage of naive"):
        loaded(exp, "naive", tmp_path / "model.pt", VOCAB)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_outputs_are_group_readable_under_umask_022(tmp_path: Path, umask_022) -> None:
    with atomic_write(tmp_path / "a.txt") as fh:
        fh.write("x\n")
    write_json(tmp_path / "b.json", {"x": 1})
    with atomic_dir(tmp_path / "d") as d:
        (d / "f").write_text("y\n")
    checkpoint.save(tmp_path / "step1.pt", {"x": torch.zeros(1)})
    checkpoint.link_or_copy(tmp_path / "step1.pt", tmp_path / "last.pt")
    for name in ("a.txt", "b.json", "step1.pt", "last.pt", "d/f"):
        assert _mode(tmp_path / name) == 0o644, name
    assert _mode(tmp_path / "d") == 0o755


def test_outputs_follow_a_stricter_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        with atomic_write(tmp_path / "a.txt") as fh:
            fh.write("x\n")
        with atomic_dir(tmp_path / "d"):
            pass
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a.txt") == 0o600
    assert _mode(tmp_path / "d") == 0o700
