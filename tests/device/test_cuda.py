"""The GPU paths, run with ``--device cuda`` and skipped without it: bf16 and fp16 autocast in training, fp16's
GradScaler saved and resumed, two NCCL ranks where two GPUs exist, and decoding on the GPU.

Training picks its device itself (``lsnmt.train.dist.Dist``: ``cuda:LOCAL_RANK`` when CUDA is available), so these
tests use the first GPU whatever ``--device`` names; decoding uses the ``device`` fixture.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from lsnmt.data.corpus import Vocab, load_split
from lsnmt.decode.translate import translate_direction
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.trainer import train
from lsnmt.train.update import seed_forward
from models.build import build_transformer
from tests.train.helpers import make_bin, tiny_experiment, weights
from tests.train.test_ddp import SETTINGS, _assert_close, _free_port, _rank

pytestmark = pytest.mark.cuda


def _finite(state: dict[str, torch.Tensor]) -> bool:
    return all(torch.isfinite(v).all() for v in state.values() if v.is_floating_point())


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_mixed_precision_trains_saves_and_resumes(precision: str, tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(max_steps=4, save_every=2, precision=precision)
    train(exp, bin_dir, tmp_path / "out", tmp_path / "work")
    first = ckpt.load(tmp_path / "work" / "last.pt")
    assert first["step"] == 4 and _finite(first["model"])
    assert bool(first["scaler"]) == (precision == "fp16")  # the GradScaler's state, fp16 only
    if precision == "fp16":
        assert first["scaler"]["scale"] > 0
    longer = tiny_experiment(max_steps=8, save_every=2, precision=precision)  # max_steps: resumes from step 4
    train(longer, bin_dir, tmp_path / "out2", tmp_path / "work")
    resumed = ckpt.load(tmp_path / "work" / "last.pt")
    assert resumed["step"] == 8 and _finite(resumed["model"])
    assert any(not torch.equal(first["model"][k], resumed["model"][k]) for k in first["model"])


@pytest.mark.timeout(300)
def test_two_nccl_ranks_equal_one_process(tmp_path: Path) -> None:
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    bin_dir = make_bin(tmp_path / "bin")
    mp.spawn(_rank, args=(2, _free_port(), bin_dir, tmp_path / "ddp", SETTINGS), nprocs=2, join=True)
    train(tiny_experiment(**SETTINGS, update_freq=2), bin_dir, tmp_path / "one" / "out", tmp_path / "one" / "work")
    for step in (1, 2):
        ddp, one = (ckpt.load(tmp_path / run / "work" / f"step{step}.pt") for run in ("ddp", "one"))
        assert ddp["stream"] == one["stream"]
        _assert_close(ddp["model"], one["model"], f"step {step} weight")  # NCCL's sum order: float noise only


def test_greedy_decoding_on_the_gpu_matches_the_cpu(device: torch.device, tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(max_steps=6, decode={"beam": 1, "max_len_b": 6})
    train(exp, bin_dir, tmp_path / "out", tmp_path / "work")
    vocab = Vocab.load(bin_dir)
    model = build_transformer(
        exp.model, vocab_size=vocab.size, num_languages=len(vocab.languages), padding_idx=vocab.pad
    )
    model.load_state_dict(weights(tmp_path / "out" / "model.pt"))
    model.eval()
    (direction,) = load_split(bin_dir, "valid", (("en", "de"),), vocab)
    on_cpu = translate_direction(model, direction, exp.decode, vocab, torch.device("cpu"), exp.train.max_steps)
    on_gpu = translate_direction(model.to(device), direction, exp.decode, vocab, device, exp.train.max_steps)
    same = sum(a == b for a, b in zip(on_gpu, on_cpu, strict=True))
    assert same >= 0.9 * len(on_cpu), f"{same} / {len(on_cpu)}"  # a near-tie may flip an argmax on another device


@pytest.mark.parametrize("beam", [1, 5])
@pytest.mark.parametrize("mixed", [False, True])
def test_search_steps_read_nothing_from_the_gpu(device: torch.device, beam: int, mixed: bool) -> None:
    """Issue 21: no host sync per step. With no finished-sentence check inside the search (``check_every`` past the
    last step), a 12-step search synchronises exactly as often as a 4-step one (before and after the loop)."""
    import warnings

    from lsnmt.decode.beam import beam_search
    from models.lang import LangContext
    from tests.models.helpers import TOY_LS, random_batch, tiny

    model = tiny(vocab=13, decoder="per-target", factories=TOY_LS).to(device)
    src = random_batch(4, 6, 1, 13)[0].to(device)
    langs = (
        LangContext(torch.tensor([0, 1, 2, 0]), torch.tensor([1, 0, 0, 2])).to(device)
        if mixed
        else LangContext.single(0, 1, 4, device)
    )

    def syncs(length: int) -> int:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                beam_search(model, src, langs, beam=beam, max_len_b=length, min_len=length, check_every=1000)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        return sum("synchroniz" in str(w.message) for w in caught)

    assert syncs(12) == syncs(4)


def test_seed_forward_draws_on_the_gpu_what_manual_seed_draws() -> None:
    """``seed_forward`` (each update's dropout seed) seeds the training GPU's generator as ``torch.manual_seed``
    does, with the device's index given or not."""
    device = torch.device("cuda", 0)
    x = torch.ones(256, 64, device=device)
    torch.manual_seed(77)
    want = torch.nn.functional.dropout(x, 0.5)
    seed_forward(77, device)
    assert torch.equal(torch.nn.functional.dropout(x, 0.5), want)
    seed_forward(78, torch.device("cuda"))  # no index: the current device
    other = torch.nn.functional.dropout(x, 0.5)
    torch.manual_seed(78)
    assert torch.equal(torch.nn.functional.dropout(x, 0.5), other)
