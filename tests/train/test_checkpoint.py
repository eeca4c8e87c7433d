"""Atomic saves, keep-last-N, RNG round trip and checkpoint averaging."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from lsnmt.train import checkpoint as ckpt


def test_crash_during_save_keeps_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    last = tmp_path / "last.pt"
    ckpt.save(last, {"model": {"w": torch.ones(3)}, "step": 1})
    real_save = torch.save

    def crash(obj, fh):
        real_save({"model": {"w": torch.zeros(1000)}}, fh)  # bytes reach the temporary file …
        fh.truncate(100)  # … half of them …
        raise KeyboardInterrupt  # … and the process dies

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        ckpt.save(last, {"model": {"w": torch.full((3,), 2.0)}, "step": 2})
    monkeypatch.undo()
    state = ckpt.load(last)
    assert state["step"] == 1 and torch.equal(state["model"]["w"], torch.ones(3))
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]


def test_partial_files_of_a_killed_save_are_removed(tmp_path: Path) -> None:
    (tmp_path / ".last.pt.abc123.tmp").write_bytes(b"half")
    (tmp_path / "last.pt").write_bytes(b"x")
    ckpt.remove_partial(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]


def test_link_replaces_atomically_and_survives_pruning(tmp_path: Path) -> None:
    for n in (3, 6, 9, 12):
        ckpt.save(tmp_path / f"step{n}.pt", {"model": {"w": torch.tensor([float(n)])}})
        ckpt.link_or_copy(tmp_path / f"step{n}.pt", tmp_path / "last.pt")
    ckpt.prune(tmp_path, keep=2)
    assert [n for n, _ in ckpt.step_checkpoints(tmp_path)] == [9, 12]
    ckpt.link_or_copy(tmp_path / "step9.pt", tmp_path / "best.pt")
    ckpt.prune(tmp_path, keep=1)
    assert ckpt.load(tmp_path / "best.pt")["model"]["w"].item() == 9.0
    assert ckpt.load(tmp_path / "last.pt")["model"]["w"].item() == 12.0


def test_average_of_two_checkpoints_is_the_mean(tmp_path: Path) -> None:
    torch.manual_seed(0)
    a = {"w": torch.randn(4, 3), "b": torch.randn(3), "count": torch.tensor(5)}
    b = {"w": torch.randn(4, 3), "b": torch.randn(3), "count": torch.tensor(8)}
    ckpt.save(tmp_path / "a.pt", {"model": a})
    ckpt.save(tmp_path / "b.pt", {"model": b})
    avg = ckpt.average([tmp_path / "a.pt", tmp_path / "b.pt"])
    assert torch.equal(avg["w"], (a["w"] + b["w"]) / 2)
    assert torch.equal(avg["b"], (a["b"] + b["b"]) / 2)
    assert avg["w"].dtype == torch.float32 and avg["count"].item() == 6  # fairseq: integer // n


def test_rng_state_round_trip(tmp_path: Path) -> None:
    ckpt.save(tmp_path / "r.pt", {"rng": ckpt.rng_state()})
    expected = (torch.rand(3), np.random.rand(3), random.random())
    ckpt.set_rng_state(ckpt.load(tmp_path / "r.pt")["rng"])
    assert torch.equal(torch.rand(3), expected[0])
    assert np.array_equal(np.random.rand(3), expected[1])
    assert random.random() == expected[2]



def test_generator_states_stay_on_the_cpu_whatever_device_the_checkpoint_is_loaded_onto(tmp_path: Path) -> None:
    """A GPU resume loads the checkpoint onto the GPU, but torch's ``set_rng_state`` takes a CPU ByteTensor: the
    meta device stands in for the GPU here (before the fix: ``TypeError: RNG state must be a torch.ByteTensor``)."""
    ckpt.save(tmp_path / "r.pt", {"model": {"w": torch.ones(2)}, "rng": ckpt.rng_state(), "step": 3})
    expected = (torch.rand(3), np.random.rand(3), random.random())
    state = ckpt.load(tmp_path / "r.pt", torch.device("meta"))
    assert state["model"]["w"].device.type == "meta" and state["step"] == 3
    ckpt.set_rng_state(state["rng"])
    assert torch.equal(torch.rand(3), expected[0])
    assert np.array_equal(np.random.rand(3), expected[1])
    assert random.random() == expected[2]
