"""The training log line and ``curve.tsv`` (for ``dvc plots``).

Losses are per target token in bits (``sum / ntokens / ln 2``), as fairseq
reports them. A curve row is written at every ``log_every`` step and at every
validation; its ``loss``/``nll`` average the updates since the previous row and
``valid_loss`` is empty when the row's step did not validate. The running sums
live in the checkpoint, so a resumed run writes the same rows as an
uninterrupted one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

from lsnmt.io import atomic_write
from lsnmt.train.loss import LOG2
from lsnmt.train.tracker import Tracker

COLUMNS = ("step", "loss", "nll", "lr", "valid_loss")


@dataclass
class Meters:
    """Sums over the updates since the last curve row."""

    loss: float = 0.0
    nll: float = 0.0
    ntokens: int = 0

    def add(self, loss: float, nll: float, ntokens: int) -> None:
        self.loss += loss
        self.nll += nll
        self.ntokens += ntokens

    def reset(self) -> None:
        self.loss, self.nll, self.ntokens = 0.0, 0.0, 0

    def bits(self) -> tuple[float, float]:
        """(loss, nll) in bits per token; NaN when empty."""
        if not self.ntokens:
            return math.nan, math.nan
        return self.loss / self.ntokens / LOG2, self.nll / self.ntokens / LOG2

    def state_dict(self) -> dict[str, float]:
        return asdict(self)

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.loss, self.nll, self.ntokens = float(state["loss"]), float(state["nll"]), int(state["ntokens"])


def log_line(step: int, max_steps: int, loss: float, nll: float, lr: float, tok_s: float) -> str:
    """``step 00100/10000 | loss 5.123 | nll 4.900 | lr 1.2e-04 | tok/s 12345``."""
    width = max(5, len(str(max_steps)))
    return (f"step {step:0{width}d}/{max_steps:0{width}d} | loss {loss:.3f} | nll {nll:.3f} | lr {lr:.1e} | "
            f"tok/s {tok_s:.0f}")


def _fmt(x: float | None) -> str:
    return "" if x is None or math.isnan(x) else f"{x:.6g}"


class Curve:
    """Append-only ``curve.tsv`` that can be cut back to a checkpoint's step on resume; each row also goes to
    ``tracker`` (``train.tracker``: :mod:`lsnmt.train.tracker`) when there is one."""

    def __init__(self, path: Path, resume_step: int | None, tracker: Tracker | None = None) -> None:
        self.path = path
        self.tracker = tracker
        rows = self._rows_up_to(resume_step) if resume_step is not None and path.is_file() else []
        with atomic_write(path) as fh:
            fh.write("\t".join(COLUMNS) + "\n")
            fh.writelines(rows)

    def _rows_up_to(self, step: int) -> list[str]:
        """Complete (newline-terminated: a kill may cut the last one) rows of steps ``<= step``."""
        lines = self.path.read_text(encoding="utf-8").split("\n")[1:-1]
        return [line + "\n" for line in lines if int(line.split("\t", 1)[0]) <= step]

    def append(self, step: int, loss: float, nll: float, lr: float, valid_loss: float | None) -> None:
        with open(self.path, "a", encoding="utf-8", newline="\n") as fh:
            fh.write("\t".join([str(step), _fmt(loss), _fmt(nll), f"{lr:.6g}", _fmt(valid_loss)]) + "\n")
        if self.tracker is not None:
            self.tracker.log(step, {"loss": loss, "nll": nll, "lr": lr, "valid_loss": valid_loss})
