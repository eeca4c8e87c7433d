"""The host-device sync counter (models/syncs.py) sees what a GPU would wait on, on a CPU."""

import threading

import pytest
import torch

from models.syncs import count_syncs


def test_pure_device_work_counts_nothing():
    x = torch.randn(4, 3, requires_grad=True)
    with count_syncs() as syncs:
        y = torch.softmax(x, -1).index_select(0, torch.tensor([2, 0])).sum()
        y.backward()
    assert syncs.count == 0, syncs.report()


@pytest.mark.parametrize("read", [
    lambda x: x.sum().item(),
    lambda x: bool(x.sum() > 0),
    lambda x: float(x.sum()),
    lambda x: x.tolist(),
    lambda x: x.cpu(),
    lambda x: x.numpy(),
    lambda x: x[x > 0],
    lambda x: (x > 0).nonzero(),
    lambda x: torch.unique(x),
    lambda x: torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([2, 1])),
    lambda x: torch.cuda.synchronize() if torch.cuda.is_available() else x.sum().item(),
    lambda x: torch.bincount(torch.tensor([0, 2]), minlength=4),
], ids=["item", "bool", "float", "tolist", "cpu", "numpy", "bool-mask", "nonzero", "unique",
        "repeat_interleave", "synchronize", "bincount"])
def test_each_synchronising_call_is_counted_with_its_place(read):
    x = torch.randn(5)
    with count_syncs() as syncs:
        read(x)
    assert syncs.count >= 1
    assert "test_syncs.py" in syncs.report()


def _set_through_index(x):
    x[torch.tensor([0, 2])] = 3.0


def _set_basic(x):
    x[:, 0] = 3.0 if x.dim() > 1 else x.fill_(3.0)


def test_a_number_assigned_through_a_tensor_index_is_counted():
    """On a CUDA tensor the number becomes a CPU tensor that ``index_put_`` copies to the device with a blocking copy
    (``THPVariable_setitem``): the per-step sync that beam search had (``Finalised.add``)."""
    x = torch.zeros(5)
    with count_syncs() as syncs:
        _set_through_index(x)
    assert syncs.count == 1 and "setitem of a Python number" in syncs.report()
    with count_syncs() as syncs:  # a device value through the index, or a number through basic indexing: no copy
        x[torch.tensor([0, 2])] = torch.full((2,), 3.0)
        _set_basic(torch.zeros(2, 2))
    assert syncs.count == 0, syncs.report()
    assert x.tolist() == [3.0, 0.0, 3.0, 0.0, 0.0]


def test_static_repeat_interleave_and_other_threads_are_not_counted():
    x = torch.randn(5)
    with count_syncs() as syncs:
        torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([2, 1]), output_size=3)
        t = threading.Thread(target=lambda: x.tolist())
        t.start()
        t.join()
    assert syncs.count == 0, syncs.report()


def test_wrapped_methods_are_restored():
    before, setitem = torch.Tensor.tolist, torch.Tensor.__setitem__
    with count_syncs():
        pass
    assert torch.Tensor.tolist is before and torch.Tensor.__setitem__ is setitem
    assert torch.tensor([1, 2]).tolist() == [1, 2]
