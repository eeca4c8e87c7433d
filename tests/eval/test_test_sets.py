"""Every test set, not only the primary one: a corpus with ``heldout`` pairs adds the in-domain test set
``test.{corpus}`` (its training directions), translated into ``translate/<method>/test.{corpus}/`` (and
``<route>/test.{corpus}/``) and scored beside ``test`` into ``evaluate/<system>/test.{corpus}/`` and
``summary.json``'s ``test_sets`` (lsnmt/data/layout.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from lsnmt.eval.summary import evaluate
from tests.eval.helpers import MAX_SENTENCES, corrupt, experiment, make_world, write
from tests.eval.test_evaluate import any_method_loads_as_naive  # noqa: F401  (parameter counts of the doubles)

HELD = "test.bitext"


def test_translate_writes_every_test_set_through_every_route(tmp_path: Path) -> None:
    """FD: the configured route into the folder, LS into ``ls/``; the held-out set into ``test.bitext/`` of each,
    the first decode.max_sentences sentences of every training direction."""
    from lsnmt.decode.translate import translate_method
    from lsnmt.methods import resolve
    from models.build import build_transformer
    from tests.data.helpers import experiment as data_experiment
    from tests.eval.helpers import flores, train_spm, translate_view
    from tests.train.helpers import LANGS, TINY_MODEL, VOCAB, make_bin, write_direction

    sources = [{"name": "bitext", "kind": "embedded", "splits": ["train"], "heldout": 5},
               {"name": "mw", "kind": "embedded", "splits": ["valid", "test"]}]
    exp = data_experiment(LANGS, data={"sources": sources, "zero_shot": ["de-fr"]}, model=TINY_MODEL,
                          decode={"beam": 2, "max_len_b": 4, "max_sentences": 3}, method_cfg={"fd": {"kind": "fd"}})
    assert exp.data.test_sets == {"test": (*exp.data.train_pairs, ("de", "fr")), HELD: exp.data.train_pairs}
    bin_dir = make_bin(tmp_path / "bin")
    rng = torch.Generator().manual_seed(0)
    for test_set, n in (("test", 4), (HELD, 5)):
        for s, t in exp.data.test_sets[test_set]:
            src = [torch.randint(4, VOCAB, (k + 2,), generator=rng).tolist() for k in range(n)]
            write_direction(bin_dir, test_set, f"{s}-{t}", src, src)
    train_spm(tmp_path / "spm", [x for lang in LANGS for x in flores(lang, 100, "dev")])
    torch.manual_seed(0)
    model = build_transformer(exp.model, vocab_size=VOCAB, num_languages=3, padding_idx=1, method="fd",
                              method_cfg=resolve(exp.method_cfg, "fd")[1])
    torch.save({"model": model.state_dict()}, tmp_path / "model.pt")

    counts = translate_method(translate_view(exp), exp.name, "fd", tmp_path / "model.pt", tmp_path / "spm", bin_dir,
                              tmp_path / "out")
    assert counts["fd"] == counts["fd_ls"] == {t: dict.fromkeys((f"{s}-{g}" for s, g in pairs), 3)
                                               for t, pairs in exp.data.test_sets.items()}
    trained = sorted(f"{s}-{t}.hyp" for s, t in exp.data.train_pairs)
    for folder in (tmp_path / "out", tmp_path / "out" / "ls"):
        assert sorted(p.name for p in folder.glob("*.hyp")) == sorted([*trained, "de-fr.hyp"])
        assert sorted(p.name for p in (folder / HELD).iterdir()) == sorted([*trained, "length_limit.json"])
        assert all(len((folder / HELD / h).read_text().splitlines()) == 3 for h in trained)
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir()) == ["ls", HELD]


def _world(tmp_path: Path):
    """Held out: ``naive`` copies the references like ``good`` (a tie), ``fd`` writes one word a line
    (degenerate there only), ``fd_ls`` drops every other word; on ``test`` both FD routes drop words."""
    exp = experiment(heldout=5, similarity_sets=[], tsne_sets=[])
    w = make_world(tmp_path / "world", exp, ("naive", "good", "fd"))
    for test_set, pairs in exp.data.test_sets.items():
        sub = "" if test_set == "test" else test_set
        for s, t in pairs:
            refs = (w.results / "translate" / "good" / sub / f"{s}-{t}.hyp").read_text().splitlines()
            write(w.results / "translate" / "fd" / "ls" / sub / f"{s}-{t}.hyp", map(corrupt, refs))
            if sub:
                write(w.results / "translate" / "naive" / sub / f"{s}-{t}.hyp", refs)
                write(w.results / "translate" / "fd" / sub / f"{s}-{t}.hyp", (x.split()[0] for x in refs))
    return exp, w


def test_evaluate_scores_the_held_out_set_beside_the_primary_one(tmp_path: Path) -> None:
    exp, w = _world(tmp_path)
    summary = evaluate(exp, exp.name, ("naive", "good", "fd"), w.results, w.prepared, w.spm, w.bin, tmp_path / "out")
    out = tmp_path / "out"
    # the primary test set: as before, and says what it is
    assert summary["test_set"] == "test" and summary["label"] == "out-of-domain (flores, no training corpus)"
    assert summary["significance"]["good"]["bleu"]["outcomes"]["better"] == 4
    assert summary["degenerate"]["systems"] == {} and "cost" in summary
    # the held-out set: the same structure, its own numbers
    assert list(summary["test_sets"]) == [HELD]
    held = summary["test_sets"][HELD]
    assert held["label"] == "in-domain held-out (bitext, disjoint from training)"
    assert held["direction_sets"]["all"] == ["en-de", "en-fr", "de-en", "fr-en"]
    assert held["sentences"] == dict.fromkeys(held["direction_sets"]["all"], MAX_SENTENCES)
    assert held["signatures"] == summary["signatures"] and held["signatures"]["chrf"][0].startswith("nrefs:1|")
    assert held["scores"]["naive"]["bleu"]["averages"]["all"] == pytest.approx(100.0)
    assert held["win_ratio"]["good"]["chrf"] == {"en-xx": 0.0, "xx-en": 0.0, "all": 0.0}  # a tie never wins
    assert held["significance"]["good"]["chrf"]["outcomes"] == {"better": 0, "worse": 0, "not_significant": 4,
                                                                "degenerate": 0}
    assert held["significance"]["fd_ls"]["bleu"]["outcomes"]["worse"] == 4
    assert "length ratio" in held["degenerate"]["systems"]["fd"] and "fd" in held["degenerate"]["pairs"]
    assert held["significance"]["fd"]["bleu"]["outcomes"]["degenerate"] == 4
    assert set(held["win_ratio"]["fd"]["bleu"].values()) == {None}
    assert not {"cost", "similarity", "figures", "atp", "test_sets"} & set(held)
    # per-direction records in the system's folder of the test set
    for system in ("naive", "good", "fd", "fd_ls"):
        assert sorted(p.name for p in (out / system / HELD).iterdir()) == sorted(
            f"{d}.json" for d in held["direction_sets"]["all"])
    rec = json.loads((out / "fd_ls" / HELD / "en-de.json").read_text())
    assert rec["sentences"] == MAX_SENTENCES and rec["scores"]["bleu"]["signature"].startswith("nrefs:1|")
    assert json.loads((out / "summary.json").read_text()) == json.loads(json.dumps(summary))


def test_summary_md_has_one_section_per_test_set(tmp_path: Path) -> None:
    exp, w = _world(tmp_path)
    evaluate(exp, exp.name, ("naive", "good", "fd"), w.results, w.prepared, w.spm, w.bin, tmp_path / "out")
    md = (tmp_path / "out" / "summary.md").read_text()
    primary = md.index("## Test set `test`: out-of-domain (flores, no training corpus)")
    held = md.index(f"## Test set `{HELD}`: in-domain held-out (bitext, disjoint from training)")
    assert primary < held and md.count("### bleu") == md.count("### chrf") == 2
    assert "| fd (degenerate) |" not in md[:held] and "| fd (degenerate) |" in md[held:]
    assert "| good | 100.00 | 100.00 | 100.00 | 0.0 | 0 / 0 |" in md[held:]  # a tie: no win, nothing significant
    assert "| good | 100.00 | 100.00 | 100.00 | 100.0 | 4 / 0 |" in md[:held]
