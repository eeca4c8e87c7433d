"""CLM Figure 4's decoding sweep and the decoding-length check (issue 18).

A CLM method with ``sweep_top_w`` is translated once more per ``w`` from the same ``model.pt`` into
``translate/<method>/w<w>/`` and scored as the system ``<method>_w<w>``; every folder of hypotheses counts those
that stopped at the length limit (``length_limit.json``), which evaluate copies into each score JSON and the
summary, with a warning when the count is above 0.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest
import torch

from lsnmt.decode.translate import LENGTH_LIMIT, translate_method
from lsnmt.eval import analyses
from lsnmt.eval.summary import evaluate
from lsnmt.methods import resolve
from lsnmt.methods.schema import typed_entry
from models.build import build_transformer
from tests.data.helpers import experiment as data_experiment
from tests.eval.helpers import experiment, flores, make_world, train_spm, translate_view
from tests.eval.test_evaluate import any_method_loads_as_naive  # noqa: F401  (parameter counts of the doubles)
from tests.train.helpers import LANGS, TINY_MODEL, VOCAB, make_bin, write_direction

SENTENCES = 3


def _translated(tmp_path: Path, max_len_b: int) -> tuple[dict, Path, list[str]]:
    """A tiny sCLM (k = 4) saved as model.pt, translated with ``sweep_top_w: [1, 4]``."""
    sources = [{"name": "mw", "kind": "embedded", "splits": ["valid", "test"]}]
    exp = data_experiment(
        LANGS,
        data={"sources": sources},
        model=TINY_MODEL,
        decode={"beam": 2, "max_len_a": 0.0, "max_len_b": max_len_b, "max_sentences": SENTENCES},
        method_cfg={"sclm": {"kind": "clm", "features": 4, "sweep_top_w": [1, 4]}},
    )
    bin_dir = make_bin(tmp_path / "bin")
    rng = torch.Generator().manual_seed(0)
    for s, t in exp.data.test_sets["test"]:
        src = [torch.randint(4, VOCAB, (k + 3,), generator=rng).tolist() for k in range(4)]
        write_direction(bin_dir, "test", f"{s}-{t}", src, src)
    train_spm(tmp_path / "spm", [x for lang in LANGS for x in flores(lang, 100, "dev")])
    torch.manual_seed(0)
    model = build_transformer(
        exp.model,
        vocab_size=VOCAB,
        num_languages=3,
        padding_idx=1,
        method="clm",
        method_cfg=resolve(exp.method_cfg, "sclm")[1],
    )
    torch.save({"model": model.state_dict()}, tmp_path / "model.pt")
    view = translate_view(exp)
    counts = translate_method(
        view, exp.name, "sclm", tmp_path / "model.pt", tmp_path / "spm", bin_dir, tmp_path / "out"
    )
    return counts, tmp_path / "out", [f"{s}-{t}" for s, t in exp.data.test_sets["test"]]


def _hyps(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.hyp"))}


def test_translate_decodes_every_top_w_from_the_same_model(tmp_path: Path) -> None:
    counts, out, directions = _translated(tmp_path, max_len_b=6)
    assert set(counts) == {"sclm", "sclm_w1", "sclm_w4"}
    assert all(c == {"test": dict.fromkeys(directions, SENTENCES)} for c in counts.values())
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["w1", "w4"]
    full, w1, w4 = _hyps(out), _hyps(out / "w1"), _hyps(out / "w4")
    assert sorted(full) == sorted(f"{d}.hyp" for d in directions)
    assert w4 == full  # w = k: nothing pruned, the same hypotheses byte for byte
    assert w1 != full  # one feature per token: another model's output


def test_hypotheses_at_the_length_limit_are_counted_per_direction(tmp_path: Path) -> None:
    """With ``max_len_b = 1`` and EOS banned before one token (fairseq's min_len 1), every hypothesis ends at the
    limit: each direction counts all its sentences, in every system's folder."""
    _, out, directions = _translated(tmp_path, max_len_b=1)
    for folder in (out, out / "w1", out / "w4"):
        record = json.loads((folder / LENGTH_LIMIT).read_text(encoding="utf-8"))
        assert record == {"max_len_a": 0.0, "max_len_b": 1, "at_limit": dict.fromkeys(directions, SENTENCES)}


def test_evaluate_scores_sweep_systems_and_reports_the_length_limit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sclm_w1`` is scored like any system; the length-limit counts reach each score JSON and the summary, a
    warning names the system and directions with cut hypotheses, and a folder without counts reads ``None``."""
    exp = experiment(similarity_sets=[], tsne_sets=[])
    exp = dataclasses.replace(
        exp,
        method_cfg={
            **exp.method_cfg,
            "sclm": typed_entry({"kind": "clm", "features": 2, "sweep_top_w": [1]}, "method_cfg.sclm"),
        },
    )
    monkeypatch.setattr(analyses, "atp_analysis", lambda *a, **k: {"atp of": "the method's own system"})
    monkeypatch.setattr(analyses, "load_split", lambda *a, **k: [])  # the world has no encoded test shards
    w = make_world(tmp_path / "world", exp, ("naive", "good", "sclm"))
    pairs = [f"{s}-{t}" for s, t in exp.data.eval_pairs]
    sweep = w.results / "translate" / "sclm" / "w1"
    sweep.mkdir(parents=True)
    for p in pairs:
        (sweep / f"{p}.hyp").write_bytes((w.results / "translate" / "good" / f"{p}.hyp").read_bytes())
    for method, cut in (("good", {}), ("sclm/w1", {pairs[0]: 2})):
        record = {"max_len_a": 0.0, "max_len_b": 200, "at_limit": {p: cut.get(p, 0) for p in pairs}}
        (w.results / "translate" / method / LENGTH_LIMIT).write_text(json.dumps(record), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="lsnmt.eval.summary"):
        summary = evaluate(
            exp, exp.name, ("naive", "good", "sclm"), w.results, w.prepared, w.spm, w.bin, tmp_path / "out"
        )
    assert summary["methods"] == ["naive", "good", "sclm", "sclm_w1"]
    assert summary["systems"]["sclm_w1"] == {"method": "sclm", "route": None, "top_w": 1}
    good = summary["scores"]["good"]["bleu"]["averages"]["all"]
    assert summary["scores"]["sclm_w1"]["bleu"]["averages"]["all"] == pytest.approx(good)  # same hypotheses
    assert summary["length_limit"] == {
        "naive": {"at_limit": None, "directions": []},
        "good": {"at_limit": 0, "directions": []},
        "sclm": {"at_limit": None, "directions": []},
        "sclm_w1": {"at_limit": 2, "directions": [pairs[0]]},
    }
    rec = json.loads((tmp_path / "out" / "sclm_w1" / f"{pairs[0]}.json").read_text(encoding="utf-8"))
    assert rec["at_length_limit"] == 2
    assert json.loads((tmp_path / "out" / "good" / f"{pairs[1]}.json").read_text())["at_length_limit"] == 0
    assert json.loads((tmp_path / "out" / "naive" / f"{pairs[1]}.json").read_text())["at_length_limit"] is None
    warnings = [r.getMessage() for r in caplog.records if "length limit" in r.getMessage()]
    assert len(warnings) == 1 and "sclm_w1: 2 of 40 hypotheses" in warnings[0] and pairs[0] in warnings[0]
    md = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert f"- `sclm_w1`: 2 in {pairs[0]}" in md
    assert "sclm_w1" in summary["cost"] and set(summary["atp"]) == {"sclm"}  # a sweep point: counts only


def test_decoding_is_capped_by_the_training_target_positions_as_fairseqs(tmp_path: Path) -> None:
    """fairseq's ``--max-target-positions`` (CLM App. B: 100) also caps generation at positions - 1: the loaded
    model's cap is the smaller of ``model.max_positions`` and ``train.max_target_positions``."""
    from lsnmt.data.corpus import Vocab
    from tests.eval.helpers import loaded, translate_view

    exp = data_experiment(LANGS, model=TINY_MODEL, train={"max_target_positions": 7})
    assert translate_view(exp).decode_positions == exp.decode_positions == 7  # the translate stage's view: the same
    torch.manual_seed(0)
    model = build_transformer(exp.model, vocab_size=VOCAB, num_languages=3, padding_idx=1)
    torch.save({"model": model.state_dict()}, tmp_path / "model.pt")
    vocab = Vocab(size=VOCAB, pad=1, eos=2, languages=LANGS)
    assert model.max_positions == 1024 and loaded(exp, "naive", tmp_path / "model.pt", vocab).max_positions == 7
    wide = dataclasses.replace(exp, train=dataclasses.replace(exp.train, max_target_positions=4096))
    assert loaded(wide, "naive", tmp_path / "model.pt", vocab).max_positions == 1024
