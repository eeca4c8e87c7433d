"""What the checksums cost: a checkpoint's save and load (lsnmt.train.checkpoint: atomic write, fsync) with the
digest against the same without it (``state_digest`` stubbed out), and a shard's check on opening against reading
its two files.

    .venv/bin/python benchmarks/checkpoint_digest.py [--params 25] [--tokens 100] [--repeat 3] [--dir /tmp/bench]

The state is a model of ``--params`` million float32 parameters with Adam's two moments (12 bytes a parameter,
as a translation checkpoint); the shard holds ``--tokens`` million uint16 ids. Each figure is the best of
``--repeat`` runs; the ratios compare runs of the same process on the same files (the page cache warm for both).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt.data.shards import Shard, ShardWriter  # noqa: E402
from lsnmt.train import checkpoint as ckpt  # noqa: E402


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def state(million: int) -> dict:
    n = million * 1_000_000 // 4
    params = {f"layer{i}.weight": torch.randn(n // 8) for i in range(8)}
    moments = {i: {"exp_avg": torch.randn(n // 8), "exp_avg_sq": torch.rand(n // 8)} for i in range(8)}
    return {"model": params, "optimizer": {"state": moments, "param_groups": [{"lr": 1e-3}]}, "step": 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=int, default=25, help="million parameters (x4: model + Adam in bytes / 4)")
    parser.add_argument("--tokens", type=int, default=100, help="million ids in the shard")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    torch.manual_seed(0)
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench-digest-"))
    work.mkdir(parents=True, exist_ok=True)
    s = state(args.params * 4)
    plain, ours = work / "plain.pt", work / "ours.pt"
    real = ckpt.state_digest
    ckpt.state_digest = lambda _state: ""  # the reference: everything but the digest
    save_plain = best(lambda: ckpt.save(plain, s), args.repeat)
    load_plain = best(lambda: ckpt.load(plain), args.repeat)
    ckpt.state_digest = real
    save_ours = best(lambda: ckpt.save(ours, s), args.repeat)
    load_ours = best(lambda: ckpt.load(ours), args.repeat)
    size = ours.stat().st_size / 2**20
    print(f"checkpoint {size:.0f} MiB: save {save_ours:.2f} s with the digest vs {save_plain:.2f} s without "
          f"({save_ours / save_plain:.2f}x); load {load_ours:.2f} s verified vs {load_plain:.2f} s unverified "
          f"({load_ours / load_plain:.2f}x)")
    rng = np.random.default_rng(0)
    writer = ShardWriter(work / "train.src", 32000)
    for _ in range(args.tokens):
        writer.add_many(rng.integers(4, 32000, size=(40_000, 25)).tolist())
    writer.close()
    read = best(lambda: (work / "train.src.bin").read_bytes() and (work / "train.src.idx").read_bytes(),
                args.repeat)
    check = best(lambda: Shard(work / "train.src", 32000), args.repeat)
    size = (work / "train.src.bin").stat().st_size / 2**20
    print(f"shard {size:.0f} MiB: checked on opening in {check:.2f} s vs {read:.2f} s reading its two files "
          f"({check / read:.2f}x)")


if __name__ == "__main__":
    main()
