"""The one update step (lsnmt/train/update.py) and the optimizer options the trainers share."""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn

from lsnmt.train.dist import Dist
from lsnmt.train.optim import adamw, bias_or_layer_norm, linear_warmup_decay
from lsnmt.train.update import seed_forward, update, updater

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


def test_seed_forward_draws_what_manual_seed_draws_without_touching_other_backends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``seed_forward`` gives the dropout masks ``torch.manual_seed`` gives, and calls no other backend's seeding
    (on a machine without CUDA, ``torch.manual_seed`` queues a lazy CUDA call that formats the stack: per update)."""
    drop = nn.Dropout(0.5)
    x = torch.ones(64, 8)
    torch.manual_seed(1234)
    want = drop(x)
    formatted: list[int] = []
    monkeypatch.setattr(traceback, "format_stack", lambda *a, **k: formatted.append(1) or [])
    seed_forward(1234, torch.device("cpu"))
    assert torch.equal(drop(x), want)
    assert formatted == []
    torch.manual_seed(1234)  # the check can see a lazy call: torch.manual_seed makes one where CUDA is not set up
    assert formatted or torch.cuda.is_initialized()


def test_an_update_walks_the_modules_only_to_leave_eval_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """``update`` sets training mode only when the model is not in it (after validation), not every update (a walk
    of every module), and the gradient norm is the optimizer's parameters' (no walk of the model either)."""
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    t = updater(model, torch.optim.AdamW(model.parameters(), lr=1e-3), Dist(0, 1, torch.device("cpu"), False))
    x = torch.randn(5, 3)

    def micro() -> tuple[torch.Tensor, torch.Tensor]:
        loss = model(x).square().mean()
        return loss, loss.detach().reshape(1)

    walks: list[str] = []

    def counted(name: str) -> Callable[..., object]:
        original = getattr(nn.Module, name)
        return lambda self, *a, **k: walks.append(name) or original(self, *a, **k)

    for name in ("train", "modules", "parameters", "named_parameters"):
        monkeypatch.setattr(nn.Module, name, counted(name))
    done = update(t, [micro], 1e-3, 0)
    assert walks == [] and model.training
    want = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    assert torch.allclose(done.grad_norm, want)
    walks.clear()
    model.eval()
    update(t, [micro], 1e-3, 1)
    assert walks[:1] == ["train"] and model.training and all(m.training for m in model)
