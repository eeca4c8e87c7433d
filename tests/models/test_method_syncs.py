"""No host-device synchronisation in any method's training update or decoding step: every ``KINDS`` entry (a new
kind is covered without a line here, with its default config), naive included, on mixed-direction and
one-direction batches, with a shared and a per-target decoder, through every inference route.

Counted on the CPU by ``models.syncs.count_syncs`` (the calls a GPU would wait on); the device tier runs the same
update and steps under ``torch.cuda.set_sync_debug_mode("error")`` (``tests/device/test_method_syncs_cuda.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch

from lsnmt.data.corpus import Sample
from lsnmt.decode.beam import beam_search
from lsnmt.decode.common import step_lprobs
from lsnmt.train.loss import default_criterion
from models.config.kinds import KINDS
from models.lang import LangContext
from models.ls import criterion
from models.syncs import SyncLog, count_syncs
from models.transformer import Transformer
from tests.models.helpers import EOS, PAD, method_model
from tests.models.helpers import collated as sample

KIND_NAMES = [None, *KINDS]
MIXED = ([0, 1, 2, 0, 1], [1, 0, 0, 2, 2])
ONE_WAY = ([0] * 5, [2] * 5)


@contextmanager
def no_syncs(what: str) -> Iterator[SyncLog]:
    with count_syncs() as syncs:
        yield syncs
    assert syncs.count == 0, f"{what}: {syncs.report()}"


def update(model: Transformer, kind: str | None, batch: Sample) -> None:
    """What the trainer runs per micro-batch of ``kind``: its criterion, the auxiliary loss, the backward."""
    model.train()
    batch = Sample(batch.src_tokens, batch.prev_output_tokens, batch.target, batch.langs.with_(progress=0.5),
                   batch.ntokens)
    loss, _, ntok = (criterion(kind) or default_criterion)(model, batch, 0.1, PAD)
    aux = model.aux_loss()
    (loss + (aux * ntok if aux is not None else 0)).backward()


@pytest.mark.parametrize("decoder", ["shared", "per-target"])
@pytest.mark.parametrize("ids", [MIXED, ONE_WAY], ids=["mixed", "one-way"])
@pytest.mark.parametrize("kind", KIND_NAMES, ids=lambda k: k or "naive")
def test_a_training_update_reads_nothing_from_the_device(kind: str | None, ids: tuple, decoder: str) -> None:
    model, batch = method_model(kind, decoder), sample(ids)
    with no_syncs(f"{kind or 'naive'} update"):
        update(model, kind, batch)
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def step_inputs(sentences: int, device: torch.device, beam: int = 2) -> tuple[torch.Tensor, ...]:
    """A beam reordering within each sentence, the at-maximum flags and the first tokens, on ``device`` (built
    before what is checked: a blocking copy to a GPU waits for it)."""
    order = torch.tensor([1, 0] * sentences) + torch.arange(sentences).repeat_interleave(beam) * beam
    at_max = torch.zeros(sentences * beam, dtype=torch.bool)
    return order.to(device), at_max.to(device), torch.full((sentences * beam, 1), EOS).to(device)


def decoding_steps(model: Transformer, langs: LangContext, src: torch.Tensor, inputs: tuple[torch.Tensor, ...],
                   steps: int = 3) -> None:
    """Encode, then ``steps`` incremental steps of two beams per sentence, reordered after each (what beam search
    runs per step)."""
    order, at_max, last = inputs
    beam = len(order) // len(langs)
    enc = model.encode(src, langs)
    rows = langs.repeat_interleave(beam)
    cache = model.init_cache(rows, beam)
    for step in range(steps):
        lprobs = step_lprobs(model, last, enc, rows, cache, step, pad=PAD, eos=EOS, min_len=1, at_max=at_max)
        cache.reorder_(order)
        last = lprobs.argmax(-1, keepdim=True).index_select(0, order)


def systems(kind: str | None) -> list[tuple[str | None, str | None]]:
    return [(kind, None)] + [(kind, r) for r in (KINDS[kind].routes if kind else ())]


@pytest.mark.parametrize("decoder", ["shared", "per-target"])
@pytest.mark.parametrize("ids", [MIXED, ONE_WAY], ids=["mixed", "one-way"])
@pytest.mark.parametrize("system", [s for k in KIND_NAMES for s in systems(k)], ids=lambda s: "-".join(
    x for x in (s[0] or "naive", s[1]) if x))
def test_decoding_steps_read_nothing_from_the_device(system: tuple, ids: tuple, decoder: str) -> None:
    kind, route = system
    model, batch = method_model(kind, decoder).eval(), sample(ids)
    inputs = step_inputs(len(batch.langs), batch.src_tokens.device)
    with torch.no_grad(), no_syncs("decoding"):
        decoding_steps(model, batch.langs.with_(route=route), batch.src_tokens, inputs)


@pytest.mark.parametrize("kind", KIND_NAMES, ids=lambda k: k or "naive")
def test_beam_search_syncs_do_not_grow_with_the_length(kind: str | None) -> None:
    """Outside the finished-sentence checks (none here: ``check_every`` past the end) a search reads the device a
    fixed number of times, before and after its loop, whatever the number of steps."""
    model, batch = method_model(kind, "per-target").eval(), sample(MIXED)

    def syncs(length: int) -> int:
        with count_syncs() as log:
            beam_search(model, batch.src_tokens, batch.langs, beam=3, max_len_b=length, min_len=length, eos=EOS,
                        pad=PAD, check_every=1000)
        return log.count

    assert syncs(12) == syncs(4)


def test_a_host_read_put_back_into_a_method_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness sees a sync inside a method's forward: LMS's linear map reading a value of its input."""
    from models.ls.lms import LMSLinear

    original = LMSLinear.forward

    def reads(self: LMSLinear, x: torch.Tensor, langs: LangContext | None = None) -> torch.Tensor:
        x.sum().item()
        return original(self, x, langs)

    monkeypatch.setattr(LMSLinear, "forward", reads)
    model, batch = method_model("lms"), sample(MIXED)
    with count_syncs() as syncs:
        update(model, "lms", batch)
    assert syncs.count > 0 and "test_method_syncs.py" in syncs.report()
