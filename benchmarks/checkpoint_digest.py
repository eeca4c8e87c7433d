"""What the checksums cost: a checkpoint's save and load (lsnmt.train.checkpoint: atomic write, fsync) with the
digest against the same without it (``state_digest`` stubbed out), and a shard's check on opening against reading
its two files.

    .venv/bin/python benchmarks/checkpoint_digest.py [--params 25] [--tokens 100] [--repeat 3] [--dir /tmp/bench]
    .venv/bin/python benchmarks/checkpoint_digest.py --params 1 --tokens 1 --repeat 1   # tiny (the test)

The state is a model of ``--params`` million float32 parameters with Adam's two moments (12 bytes a parameter,
as a translation checkpoint); the shard holds ``--tokens`` million uint16 ids. Each figure is the best of
``--repeat`` runs; the ratios compare runs of the same process on the same files (the page cache warm for both).
The files go to ``--dir`` (kept) or to a temporary folder (deleted at the end).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def state(million: int) -> dict[str, Any]:
    n = million * 1_000_000 // 4
    params = {f"layer{i}.weight": torch.randn(n // 8) for i in range(8)}
    moments = {i: {"exp_avg": torch.randn(n // 8), "exp_avg_sq": torch.rand(n // 8)} for i in range(8)}
    return {"model": params, "optimizer": {"state": moments, "param_groups": [{"lr": 1e-3}]}, "step": 1000}


def no_digest(state: Any) -> str:
    """The reference's stand-in for :func:`lsnmt.train.digest.state_digest`, as the checkpoint calls it: no digest."""
    return ""


def measure(work: Path, params: int, tokens: int, repeat: int) -> None:
    """Print the checkpoint's and the shard's figures, their files written in ``work``."""
    s = state(params * 4)
    plain, ours = work / "plain.pt", work / "ours.pt"
    real = ckpt.state_digest
    ckpt.state_digest = no_digest  # the reference: everything but the digest
    try:
        save_plain = best(lambda: ckpt.save(plain, s), repeat)
        load_plain = best(lambda: ckpt.load(plain), repeat)
    finally:
        ckpt.state_digest = real
    save_ours = best(lambda: ckpt.save(ours, s), repeat)
    load_ours = best(lambda: ckpt.load(ours), repeat)
    size = ours.stat().st_size / 2**20
    print(f"checkpoint {size:.0f} MiB: save {save_ours:.2f} s with the digest vs {save_plain:.2f} s without "
          f"({save_ours / save_plain:.2f}x); load {load_ours:.2f} s verified vs {load_plain:.2f} s unverified "
          f"({load_ours / load_plain:.2f}x)")
    rng = np.random.default_rng(0)
    writer = ShardWriter(work / "train.src", 32000)
    for _ in range(tokens):
        writer.add_many(rng.integers(4, 32000, size=(40_000, 25)).tolist())
    writer.close()
    read = best(lambda: (work / "train.src.bin").read_bytes() and (work / "train.src.idx").read_bytes(),
                repeat)
    check = best(lambda: Shard(work / "train.src", 32000), repeat)
    size = (work / "train.src.bin").stat().st_size / 2**20
    print(f"shard {size:.0f} MiB: checked on opening in {check:.2f} s vs {read:.2f} s reading its two files "
          f"({check / read:.2f}x)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--params", type=int, default=25, help="million parameters (x4: model + Adam in bytes / 4)")
    parser.add_argument("--tokens", type=int, default=100, help="million ids in the shard")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    if args.dir is None:
        with tempfile.TemporaryDirectory(prefix="bench-digest-") as tmp:
            measure(Path(tmp), args.params, args.tokens, args.repeat)
    else:
        args.dir.mkdir(parents=True, exist_ok=True)
        measure(args.dir, args.params, args.tokens, args.repeat)


if __name__ == "__main__":
    main()
