"""The compiled training step (``train.compile``, ``lsnmt/train/compiled.py``) on a CPU: no graph break in any
method's forward, a few compilations over many mixed batches, and the same losses as eager training.

On a CPU ``cudagraphs`` traces through dynamo and AOTAutograd and runs the graphs with the eager kernels
(``aot_eager``): the graphs a GPU would record, so a break or a recompilation shows up here first.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
import torch

from lsnmt.experiment.params import Experiment, Params
from lsnmt.methods import resolve
from lsnmt.train.compiled import compile_options
from lsnmt.train.dist import Dist
from lsnmt.train.ops import mixed_batch
from lsnmt.train.trainer import setup, train
from models.build import build_transformer
from tests.train.helpers import make_bin, tiny_experiment

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import host_cost  # noqa: E402

ONE_PER_KIND = ("naive", "lms", "fd", "lms_fd", "switch", "clsr", "sclm", "adapter", "deep", "lsl_src_tgt")
"""One ``default_gpu`` method of each kind of ``models.config.kinds.KINDS`` (and the naive model)."""


@pytest.fixture(scope="module")
def default_gpu() -> Experiment:
    """``default_gpu``'s structure (3+3 layers, 4 heads, its methods) at a width that keeps a CPU test fast."""
    exp = Params.load(ROOT / "params.yaml").get("default_gpu")
    return dataclasses.replace(exp, model=dataclasses.replace(exp.model, embed_dim=32, ffn_dim=64))


def test_every_kind_of_default_gpu_is_covered(default_gpu: Experiment) -> None:
    from models.config.kinds import KINDS

    assert {resolve(default_gpu.method_cfg, m)[0] for m in ONE_PER_KIND} == {None, *KINDS}


@pytest.mark.parametrize("method", ONE_PER_KIND)
def test_the_forward_compiles_to_one_graph(default_gpu: Experiment, method: str) -> None:
    """No graph break in a training forward on a mixed batch of every direction (a break splits the CUDA graphs
    and puts the host back between the pieces)."""
    kind, cfg = resolve(default_gpu.method_cfg, method)
    torch.manual_seed(0)
    model = build_transformer(default_gpu.model, vocab_size=200, num_languages=len(default_gpu.data.languages),
                              padding_idx=1, method=kind, method_cfg=cfg).train()
    s = mixed_batch(default_gpu, 200, max_tokens=256, length=8)
    langs = s.langs.with_(progress=0.5)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model)(s.src_tokens, s.prev_output_tokens, langs)
    reasons = "; ".join(sorted({str(b.reason).splitlines()[0][:120] for b in explained.break_reasons}))
    assert explained.graph_break_count == 0, f"{method}: {explained.graph_break_count} breaks: {reasons}"


@pytest.mark.long
def test_few_compilations_over_300_mixed_default_gpu_batches(tmp_path: Path, default_gpu: Experiment) -> None:
    """``default_gpu``'s batches (8,192 tokens, mixed directions, its bucket width) through the trainer's feed:
    the compiled forward is traced at most 30 times over 300 of them (the backward is traced with it)."""
    bin_dir = host_cost.write_corpus(tmp_path, 2500, host_cost.LANGUAGES, 200)
    exp = dataclasses.replace(default_gpu, train=dataclasses.replace(default_gpu.train, max_steps=10**6))
    exp = dataclasses.replace(exp, data=dataclasses.replace(exp.data, languages=host_cost.LANGUAGES))
    run, _ = setup(exp, bin_dir, Dist(0, 1, torch.device("cpu"), False), build_transformer, None)
    traced: list[int] = []

    def backend(gm: torch.fx.GraphModule, inputs: list) -> object:
        traced.append(len(gm.graph.nodes))
        return gm.forward

    options = {k: v for k, v in compile_options(exp.train.compile, torch.device("cpu")).items() if k == "dynamic"}
    torch._dynamo.reset()
    net = torch.compile(run.model, backend=backend, **options)
    shapes = set()
    try:
        for _ in range(300):
            s = run.feed.next().samples[0]
            shapes.add(tuple(s.src_tokens.shape))
            net(s.src_tokens, s.prev_output_tokens, s.langs)  # a new trace would come from the forward
    finally:
        run.feed.close()
    assert 1 <= len(traced) <= 30, f"{len(traced)} compilations over {len(shapes)} batch shapes"
    if exp.train.bucket_width:
        assert len(shapes) <= 30, sorted(shapes)


@pytest.mark.parametrize(("mode", "dropout"), [("cudagraphs", 0.1), pytest.param("default", 0.0,
                                                                                  marks=pytest.mark.slow)])
def test_compiled_training_gives_the_eager_losses(tmp_path: Path, mode: str, dropout: float) -> None:
    """20 updates compiled (``cudagraphs``: dynamo + AOTAutograd, eager kernels on a CPU, dropout drawn as eager
    draws it; ``default``: inductor's generated code, whose dropout draws its masks from its own generator, so
    without dropout) give the eager run's losses within 1e-4."""
    bin_dir = make_bin(tmp_path / "bin")
    curves = []
    for m in ("none", mode):
        torch._dynamo.reset()
        exp = tiny_experiment(model={"dropout": dropout}, compile=m, max_steps=20, log_every=1, validate_every=100,
                              save_every=100, bucket_width=4)
        train(exp, bin_dir, tmp_path / m / "out", tmp_path / m / "work")
        rows = (tmp_path / m / "work" / "curve.tsv").read_text(encoding="utf-8").splitlines()
        header = rows[0].split("\t")
        curves.append([float(r.split("\t")[header.index("loss")]) for r in rows[1:]])
    assert len(curves[0]) == 20
    torch.testing.assert_close(torch.tensor(curves[1]), torch.tensor(curves[0]), rtol=0, atol=1e-4)
