"""The ``search`` stage (LSL Sec. 3.2) and the LSL-NAS training that reads its architecture, on synthetic shards."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from lsnmt import methods
from lsnmt.data.corpus import Vocab
from lsnmt.io import DataError
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.arch_search import run_search
from models.ls.lsl import dense_name
from tests.data.helpers import experiment
from tests.train.helpers import LANGS, TINY_MODEL, make_bin, tiny_experiment

SEARCH = {"s": {"seeds": [1, 2], "max_steps": 4, "mixing_init": [0.0, 0.6, 0.3]}}  # src favoured: LSLs to train
METHODS = {"nas": {"kind": "lsl", "architecture": "s"}, "dense": {"kind": "lsl", "src": [1], "tgt": [3],
                                                                   "dense_steps": 2}}


def _exp():
    train = {"max_tokens": 64, "max_steps": 4, "lr": 1e-2, "warmup_steps": 2, "log_every": 2, "validate_every": 2,
             "save_every": 2, "keep_last": 2, "seed": 3}
    return experiment(LANGS, model={**TINY_MODEL, "encoder_layers": 3}, train=train, search=SEARCH,
                      method_cfg=METHODS)


@pytest.fixture(scope="module")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository-like folder (``data/t/bin``) where the search of :func:`_exp` has run."""
    root = tmp_path_factory.mktemp("repo")
    make_bin(root / "data" / "t" / "bin")
    run_search(_exp(), _exp().search, "t", root / "data/t/bin", root / "results/t/search", root / "work/t/search")
    return root


def test_search_writes_weights_and_the_argmax_architecture(searched: Path) -> None:
    out = searched / "results/t/search"
    assert sorted(p.name for p in (out / "s").iterdir()) == ["architecture.json", "curve-seed1.tsv",
                                                             "curve-seed2.tsv", "figure3.png", "weights.tsv"]
    arch = json.loads((out / "s/architecture.json").read_text())
    per_seed = torch.tensor([arch["per_seed"]["1"], arch["per_seed"]["2"]])  # (seeds, layers, 3)
    assert per_seed.shape == (2, 3, 3) and not torch.equal(per_seed[0], per_seed[1])  # two trainings
    torch.testing.assert_close(per_seed.sum(-1), torch.ones(2, 3))  # a softmax per layer and run
    torch.testing.assert_close(torch.tensor(arch["mean"]), per_seed.mean(0))  # Figure 3: averaged over runs
    choice = ["shared", "src", "tgt"]
    assert arch["layers"] == [choice[int(i)] for i in per_seed.mean(0).argmax(1)]
    assert arch["src"] == [i + 1 for i, c in enumerate(arch["layers"]) if c == "src"]
    assert arch["tgt"] == [i + 1 for i, c in enumerate(arch["layers"]) if c == "tgt"]
    rows = [r.split("\t") for r in (out / "s/weights.tsv").read_text().splitlines()]
    assert rows[0] == ["layer", "run", "w_shared", "w_src", "w_tgt"] and len(rows) == 1 + 3 * 4
    assert [r[1] for r in rows[1:5]] == ["seed1", "seed2", "mean", "std"]
    assert (out / "s/figure3.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "index.json").read_text()) == {
        "s": {"layers": arch["layers"], "notation": arch["notation"], "seeds": [1, 2]}}


def test_search_resumes_from_its_work_dir(searched: Path) -> None:
    """A second run trains nothing more: every run resumes at its last step and the outputs are the same bytes."""
    out = searched / "results/t/search"
    before = {p.name: p.read_bytes() for p in (out / "s").iterdir()}
    state = ckpt.load(searched / "work/t/search/s/seed1/ckpt/last.pt")
    assert state["step"] == 4 and state["config"]["method"]["kind"] == "lsl_search"
    run_search(_exp(), _exp().search, "t", searched / "data/t/bin", out, searched / "work/t/search")
    assert {p.name: p.read_bytes() for p in (out / "s").iterdir()} == before
    fewer = dataclasses.replace(_exp(), search={"s": {**SEARCH["s"], "seeds": [2], "max_steps": 3}})
    arch = run_search(fewer, fewer.search, "t", searched / "data/t/bin", searched / "other", searched / "work/t/search")
    assert arch["s"]["seeds"] == [2]
    assert not list((searched / "work/t/search").rglob("*.stale"))  # changed seeds / steps keep the runs


def test_lsl_nas_trains_the_selected_architecture(searched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lsnmt.runner.base import Job
    from stages.train import _train
    from tests.eval.helpers import loaded, train_view

    monkeypatch.chdir(searched)
    exp = _exp()
    _train(train_view(exp), Job(exp.name, item="nas"), [])  # argv: used only to relaunch under torchrun (one rank here)
    arch = json.loads(Path("results/t/search/s/architecture.json").read_text())
    model_pt = torch.load("results/t/train/nas/model.pt", weights_only=False)
    record = model_pt["config"]["method"]
    assert (record["kind"], record["cfg"]["src"], record["cfg"]["tgt"]) == ("lsl", arch["src"], arch["tgt"])
    assert record["cfg"]["architecture"] is None
    assert arch["src"]  # mixing_init favours source-indexed LSLs: the selected model has some
    for i, choice in enumerate(arch["layers"]):  # language-specific weights exactly where the search chose them
        has_copies = any(k.startswith(f"encoder.layers.{i}.langs.") for k in model_pt["model"])
        assert has_copies == (choice != "shared"), (i, choice)
    Path("results/t/search/s/architecture.json").unlink()  # decoding reads the layout from model.pt
    model = loaded(exp, "nas", Path("results/t/train/nas/model.pt"), Vocab.load(Path("data/t/bin")))
    assert [type(m).__name__ != "EncoderLayer" for m in model.encoder.layers] == [c != "shared" for c in
                                                                                   arch["layers"]]


def _write_arch(root: Path, layers: list[str], src: list[int], tgt: list[int]) -> None:
    path = methods.search_dir("t", "s", root) / "architecture.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"layers": layers, "src": src, "tgt": tgt}))


def test_bind_reads_the_search_or_the_trained_record(tmp_path: Path) -> None:
    exp = _exp()
    kind, cfg = methods.resolve(exp.method_cfg, "nas")
    with pytest.raises(DataError, match=r"results/t/search/s/architecture.json: not found.*stages.search"):
        methods.bind(exp.name, exp.model, "nas", kind, cfg, results=tmp_path / "results")
    _write_arch(tmp_path / "results", ["src", "shared", "tgt"], [1], [3])
    bound = methods.bind(exp.name, exp.model, "nas", kind, cfg, results=tmp_path / "results")
    assert (bound.src, bound.tgt, bound.architecture) == ((1,), (3,), None)
    stored = methods.record("nas", kind, bound.__class__(src=(2,), tgt=(1,)))
    assert methods.bind(exp.name, exp.model, "nas", kind, cfg, stored=stored, results=tmp_path / "results").src == (2,)
    _write_arch(tmp_path / "results", ["src", "tgt"], [1], [2])
    with pytest.raises(DataError, match="chose 2 encoder layers, but method 'nas' has a 3-layer encoder"):
        methods.bind(exp.name, exp.model, "nas", kind, cfg, results=tmp_path / "results")
    dense = methods.resolve(exp.method_cfg, "dense")
    assert methods.bind(exp.name, exp.model, "dense", *dense) == dense[1]


def test_dense_pretraining_initialises_every_copy(searched: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sec. 3.3 inside the train job: the dense phase trains first, its weights seed every language's copy."""
    import functools

    from lsnmt.train.pretrain import dense_dir, dense_pretrained
    from models.build import build_transformer

    monkeypatch.chdir(searched)
    exp = _exp()
    kind, cfg = methods.resolve(exp.method_cfg, "dense")
    work = Path("work/t/ckpt/dense")
    factory = dense_pretrained(exp, "dense", kind, cfg, Path("data/t/bin"), work,
                               functools.partial(build_transformer, method=kind, method_cfg=cfg))
    dense = ckpt.load(dense_dir(work) / "out" / "model.pt")
    assert dense["step"] == 2 and not any(".langs." in k for k in dense["model"])
    vocab = Vocab.load(Path("data/t/bin"))
    model = factory(exp.model, vocab_size=vocab.size, num_languages=3, padding_idx=vocab.pad)
    for name, t in model.state_dict().items():  # a language-specific weight: the dense one in every language's slice
        assert torch.equal(t, dense["model"][dense_name(name)].expand_as(t)), name
    assert sum(".langs." in k for k in model.state_dict()) > 0


def test_experiment_without_searches_writes_an_empty_index(tmp_path: Path) -> None:
    exp = tiny_experiment()
    assert run_search(exp, exp.search, exp.name, make_bin(tmp_path / "bin"), tmp_path / "out", tmp_path / "work") == {}
    assert json.loads((tmp_path / "out/index.json").read_text()) == {}
