"""The one update step (lsnmt/train/update.py) and the optimizer options the trainers share."""

from __future__ import annotations

import ast
from pathlib import Path

import torch
from torch import nn

from lsnmt.train.optim import adamw, bias_or_layer_norm, linear_warmup_decay

ROOT = Path(__file__).resolve().parents[2]


def _backward_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"]


def test_backward_is_called_in_one_place_of_the_library() -> None:
    """Translation, x-elm and the tasks back-propagate through ``lsnmt.train.update.update`` only."""
    found = {str(p.relative_to(ROOT)): lines for d in ("lsnmt", "models", "stages") for p in (ROOT / d).rglob("*.py")
             if (lines := _backward_calls(p))}
    assert list(found) == ["lsnmt/train/update.py"] and len(found["lsnmt/train/update.py"]) == 1, found


def test_the_tasks_schedule_is_their_former_lambda_schedule_bit_for_bit() -> None:
    """``linear_warmup_decay`` gives the rates the tasks' ``LambdaLR`` gave (the same floats), warm-up included."""
    lr, warm, total = 3e-5, 7, 40
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=lr)

    def factor(step: int) -> float:
        return (step + 1) / warm if step < warm else max(0.0, (total - step) / max(1, total - warm))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    for n in range(total + 3):
        assert linear_warmup_decay(n, lr=lr, warmup=warm, total=total) == opt.param_groups[0]["lr"], n
        opt.step()
        sched.step()


def test_biases_and_layer_norms_are_not_decayed() -> None:
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.dense = nn.Linear(3, 3)
            self.LayerNorm = nn.LayerNorm(3)  # Hugging Face's attribute name

    opt = adamw(Block(), lr=1e-3, eps=1e-8, weight_decay=0.01, exempt=bias_or_layer_norm)
    decayed, exempt = opt.param_groups
    assert decayed["weight_decay"] == 0.01 and exempt["weight_decay"] == 0.0
    assert [p.shape for p in decayed["params"]] == [torch.Size([3, 3])]
    assert len(exempt["params"]) == 3  # dense.bias, LayerNorm.weight, LayerNorm.bias
