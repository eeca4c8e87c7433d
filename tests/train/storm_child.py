"""One requeued job of the preemption storm (``tests/train/test_storm.py``): the tiny training under the stage
runner's guard, as ``stages.train`` runs it, that may send itself SIGTERM at a chosen point.

    python -m tests.train.storm_child BIN_DIR ROOT STEPS WHERE     # writes ROOT/work and ROOT/out

``WHERE``: ``none``; ``save:K`` (inside the K-th checkpoint write of this process: after its bytes are written,
before the file is synced and renamed into place); ``valid:K`` (at the start of the K-th validation) or
``update:K`` (at the start of the K-th update). The parent sends SIGTERM at random times as well; ``STORM_THROTTLE``
(seconds) slows every update down, so that a timer cannot outrun the job on a fast machine.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsnmt.stops import note_stop_signals

note_stop_signals()  # as stages/__init__.py: a signal during the imports stops the job once its guard is up

import torch  # noqa: E402

from lsnmt.runner.base import guarded, setup_logging  # noqa: E402
from lsnmt.train import trainer  # noqa: E402
from tests.train.helpers import tiny_experiment  # noqa: E402

SETTINGS = {"save_every": 5, "validate_every": 10, "log_every": 5, "keep_last": 3}


def signalling(fn: Callable[..., Any], at: int, after: bool = False) -> Callable[..., Any]:
    """``fn`` that sends this process SIGTERM on its ``at``-th call (before or ``after`` running it)."""
    calls = [0]

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == at and not after:
            os.kill(os.getpid(), signal.SIGTERM)
        out = fn(*args, **kwargs)
        if calls[0] == at and after:
            os.kill(os.getpid(), signal.SIGTERM)
        return out

    return wrapped


def inject(where: str) -> None:
    if where == "none":
        return
    kind, at = where.split(":")
    if kind == "save":  # checkpoint.save -> atomic_write -> torch.save(state, fh): the bytes are in, not yet renamed
        trainer.ckpt.torch.save = signalling(torch.save, int(at), after=True)  # type: ignore[attr-defined]
    elif kind == "valid":
        trainer.validate = signalling(trainer.validate, int(at))  # type: ignore[attr-defined]
    elif kind == "update":
        trainer.train_step = signalling(trainer.train_step, int(at))  # type: ignore[attr-defined]
    else:
        raise SystemExit(f"unknown injection {where!r}")


def throttled(fn: Callable[..., Any], seconds: float) -> Callable[..., Any]:
    """``fn`` that waits ``seconds`` first (``STORM_THROTTLE``: a slow update, the same maths)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        time.sleep(seconds)
        return fn(*args, **kwargs)

    return wrapped


def main() -> None:
    bin_dir, root, steps, where = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    torch.set_num_threads(1)
    setup_logging(None)
    if (throttle := float(os.environ.get("STORM_THROTTLE", "0"))) > 0:
        trainer.train_step = throttled(trainer.train_step, throttle)  # type: ignore[attr-defined]
    inject(where)
    exp = tiny_experiment(max_steps=steps, **SETTINGS)
    guarded("train", lambda: trainer.train(exp, bin_dir, root / "out", root / "work"))


if __name__ == "__main__":
    main()
