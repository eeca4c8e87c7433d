"""The speed benchmarks run at tiny size (``--tiny``: the same code on 16-32-dimensional models), so that they cannot
rot. Their figures are not tested (a speed claim is a ratio read from a real run, docs/benchmarks.md); what each
prints is: every contestant's row, ratios within their printed range, and the checks a benchmark makes itself."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

from lsnmt.train import checkpoint as ckpt
from lsnmt.train import digest
from tests.scripts.helpers import run_script

RATIO = r"([\d.]+)x"


def ordered(median: str, low: str, high: str) -> bool:
    """A median ratio within its printed range, all positive."""
    return 0 < float(low) <= float(median) <= float(high)


def test_train_speed_times_the_trainer_against_marian() -> None:
    out = run_script("benchmarks/train_speed.py", "--tiny --repeats 2 --steps 1 --threads 1")
    assert out.startswith("cpu, 1 threads, 2 repeats of 1 updates of 4 x 30 tokens, 32 dimensions; project\n")
    for clock in ("wall", "cpu"):
        assert re.search(rf"^{clock} clock, seconds per update: project .+, marian .+, marian-fused ", out, re.M)
    ratios = re.findall(rf"t_(marian|marian-fused) / t_project: median {RATIO}, range {RATIO}-{RATIO}", out)
    assert [name for name, *_ in ratios] == ["marian", "marian-fused"] * 2
    assert all(ordered(*r) for _, *r in ratios), ratios


def test_vs_marian_trains_and_decodes_both_models() -> None:
    out = run_script("benchmarks/vs_marian.py", "--tiny --repeats 2 --steps 1 --length 3 --threads 1")
    assert re.search(r"^device cpu, 1 threads, 2 repeats, wall clock, 32 dimensions; params project [\d,]+, ", out)
    rows = re.findall(rf"^(\w+) +{RATIO} +{RATIO} +{RATIO}$", out, re.M)
    assert [r[0] for r in rows] == ["train", "greedy", "beam5"]  # the decoders' lengths agreed (else it raises)
    assert all(ordered(*r[1:]) for r in rows), rows


def test_decode_speed_cache_gives_the_uncached_hypotheses() -> None:
    out = run_script("benchmarks/decode_speed.py", "--tiny --beam 2 --batch 2 --length 3 --repeats 1 --threads 1")
    assert "transformer_small (tiny), beam 2, batch 2, 3 tokens per sentence, 1 threads, same hypotheses: True" in out
    assert float(re.search(rf"^speed-up +{RATIO}$", out, re.M).group(1)) > 0


def test_clm_speed_decodes_every_model_of_table_9() -> None:
    out = run_script("benchmarks/clm_speed.py", "--tiny --sentences 2 --length 4 --steps 2 --rounds 1 --threads 1")
    rows = {m[0]: m[1:] for m in re.findall(r"^([\w-]+) +([\d,]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)$", out, re.M)}
    assert list(rows) == ["naive", "adapter", "sclm-top", "mclm-top", "sclm", "mclm"]
    assert rows["naive"][2] == rows["naive"][4] == "1.00"  # the reference's ratios
    params = {name: int(r[0].replace(",", "")) for name, r in rows.items()}
    assert all(params[name] > params["naive"] for name in rows if name != "naive")  # the LS modules' own weights
    assert all(float(r[1]) > 0 and float(r[3]) > 0 for r in rows.values())


def test_ls_speed_times_every_method_and_decodes_every_route() -> None:
    args = "--tiny --tokens 64 --steps 1 --rounds 1 --decode-sentences 2 --decode-steps 2 --threads 1"
    out = run_script("benchmarks/ls_speed.py", args)
    rows = re.findall(rf"^(\w+) +[\d.]+M +[\d.]+ +{RATIO} +{RATIO} +{RATIO} ", out, re.M)
    assert [r[0] for r in rows] == ["naive", "lms", "lms_fd", "fd", "switch", "clsr", "lsl"]
    assert rows[0][1:] == ("1.00", "1.00", "1.00") and all(ordered(*r[1:]) for r in rows), rows
    decoded = re.findall(r"^decode ([\w/]+) +\d+ tok/s", out, re.M)
    assert decoded == ["naive", "lms", "lms_fd", "lms_fd/ls", "fd", "fd/ls", "switch", "clsr", "lsl"]

    out = run_script("benchmarks/ls_speed.py", "--tiny --flops --tokens 64 --only lsl --threads 1")
    flops = dict(re.findall(r"^(\w+) +[\d.]+ GFLOP per update +([\d.]+)x naive$", out, re.M))
    assert flops == {"naive": "1.00", "lsl": "1.00"}  # a language's own layer computes what the shared one does


def test_checkpoint_digest_restores_the_digest_and_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = run_script("benchmarks/checkpoint_digest.py", f"--params 1 --tokens 1 --repeat 1 --dir {tmp_path / 'kept'}")
    assert re.search(rf"^checkpoint \d+ MiB: save .+ \({RATIO}\); load .+ \({RATIO}\)$", out, re.M), out
    assert re.search(rf"^shard \d+ MiB: checked on opening in .+ \({RATIO}\)$", out, re.M), out
    assert ckpt.state_digest is digest.state_digest  # the reference's stand-in is gone
    assert ckpt.load(tmp_path / "kept" / "ours.pt")["step"] == 1000  # written with its digest, and verified
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    run_script("benchmarks/checkpoint_digest.py", "--params 1 --tokens 1 --repeat 1")
    assert list((tmp_path / "tmp").iterdir()) == []  # without --dir, nothing is left behind
