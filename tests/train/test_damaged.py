"""Damaged checkpoints: every file load refuses in one line naming the file, and a run resumes from the newest
intact one (lsnmt.train.checkpoint: the digest stored inside each file)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
import torch

from lsnmt.train import checkpoint as ckpt
from lsnmt.train.trainer import train
from tests.train.helpers import assert_equal_weights, make_bin, tiny_experiment, weights


def flip_tensor_bit(path: Path, tensor: torch.Tensor) -> None:
    """Flip one bit in the stored bytes of ``tensor`` inside the checkpoint ``path`` (a zip: found by content)."""
    want = tensor.contiguous().numpy().tobytes()
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = next(i for i in zf.infolist() if zf.read(i.filename) == want)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)  # the local header's size
    raw[start + len(want) // 2] ^= 0x10
    path.write_bytes(bytes(raw))


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bin(tmp_path_factory.mktemp("bin"))


def test_a_bit_flipped_in_a_tensor_is_refused_naming_the_file(tmp_path: Path) -> None:
    w = torch.linspace(-1, 1, 64)
    ckpt.save(tmp_path / "model.pt", {"model": {"w": w}, "step": 3})
    flip_tensor_bit(tmp_path / "model.pt", w)
    changed = torch.load(tmp_path / "model.pt", weights_only=True)["model"]["w"]
    assert not torch.equal(changed, w)  # torch itself loads the other weights without a word
    with pytest.raises(ckpt.Damaged) as info:
        ckpt.load(tmp_path / "model.pt", remedy="rerun it")
    assert str(info.value) == (f"{tmp_path / 'model.pt'}: damaged, its content differs from what was written "
                               "(sha256 mismatch); rerun it")


@pytest.mark.parametrize("keep", [0.5, 0.0], ids=["truncated", "empty"])
def test_a_truncated_file_is_refused_in_one_line(tmp_path: Path, keep: float) -> None:
    ckpt.save(tmp_path / "last.pt", {"model": {"w": torch.ones(1000)}, "step": 3})
    data = (tmp_path / "last.pt").read_bytes()
    (tmp_path / "last.pt").write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(ckpt.Damaged, match=r"last\.pt: damaged, it does not load \((RuntimeError|EOFError)") as info:
        ckpt.load(tmp_path / "last.pt")
    assert "\n" not in str(info.value)


def test_a_file_without_a_checksum_loads_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    torch.save({"model": {"w": torch.ones(2)}}, tmp_path / "old.pt")  # as written before checksums
    assert torch.equal(ckpt.load(tmp_path / "old.pt")["model"]["w"], torch.ones(2))
    assert "written without a checksum" in caplog.text


def test_resume_falls_back_to_the_previous_intact_step_checkpoint(bin_dir: Path, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """last.pt (a hard link of step2.pt) damaged: the run resumes from step1.pt and redoes update 2, to the
    weights it had (the old code resumed from the damaged file, to other weights, with no word)."""
    exp = tiny_experiment(max_steps=2, save_every=1, validate_every=10)
    train(exp, bin_dir, tmp_path / "out", tmp_path / "work")
    last = tmp_path / "work/last.pt"
    before = weights(last)
    flip_tensor_bit(last, before["encoder.embed.tokens.weight"])
    assert train(exp, bin_dir, tmp_path / "out", tmp_path / "work")["step"] == 2
    assert_equal_weights(before, weights(last))
    assert "resuming from step1.pt, the newest intact checkpoint" in caplog.text


def test_no_intact_checkpoint_left_stops_in_one_line(bin_dir: Path, tmp_path: Path) -> None:
    exp = tiny_experiment(max_steps=1, keep_last=0, validate_every=10)
    train(exp, bin_dir, tmp_path / "out", tmp_path / "work")
    last = tmp_path / "work/last.pt"
    last.write_bytes(last.read_bytes()[:100])
    with pytest.raises(ckpt.Damaged, match=r"last\.pt: damaged, it does not load .*, and no intact step checkpoint "
                                           r"is left to resume from: delete .*work to train afresh$"):
        train(exp, bin_dir, tmp_path / "out", tmp_path / "work")
