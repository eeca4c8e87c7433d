"""PROTOCOL.md is params.yaml's protocol table: regenerated here, it must equal the committed file, and every row
names its source (a paper section, the authors' scripts, or "our choice" with the reason)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lsnmt.experiment.params import Params
from lsnmt.protocol import PAPER_MT, SETTINGS, render, rows

ROOT = Path(__file__).resolve().parent.parent
PARAMS = Params.load(ROOT / "params.yaml")


def test_protocol_md_is_generated_from_params_yaml() -> None:
    committed = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    assert committed == render(PARAMS), "params.yaml and PROTOCOL.md differ: python -m lsnmt.protocol > PROTOCOL.md"


def test_every_setting_of_every_paper_experiment_has_a_source() -> None:
    table = rows(PARAMS)
    assert len(table) == sum(len(v) for v in PAPER_MT.values()) * len(SETTINGS)
    assert {name for names in PAPER_MT.values() for name in names} <= set(PARAMS.experiments)
    missing = [(paper, name, setting) for paper, name, setting, _, source in table if not source.strip()]
    assert not missing, missing


def test_a_changed_setting_changes_the_table() -> None:
    """What the first test catches: one setting changed in params.yaml alone leaves PROTOCOL.md stale."""
    exp = PARAMS.get("opus100")
    changed = dataclasses.replace(exp, train=dataclasses.replace(exp.train, adam_eps=1e-8))
    params = dataclasses.replace(PARAMS, experiments={**PARAMS.experiments, "opus100": changed})
    assert render(params) != render(PARAMS)


def test_the_directions_row_follows_the_data_section() -> None:
    """Which directions each experiment trains (all, English-centric, en-xx / xx-en, with groups) and which
    evaluated ones are zero-shot, counted from ``data`` (issue 18 item 2)."""
    got = {(name, setting): value for _, name, setting, value, _ in rows(PARAMS)}
    assert got["opus100_clm_enxx", "directions"].startswith("trained: en-xx only (one-to-many), 94 directions;")
    assert got["opus100_clm_xxen", "directions"].startswith("trained: xx-en only (many-to-one), 94 directions;")
    assert got["iwslt17_zeroshot", "directions"] == (
        "trained: English-centric (en-xx and xx-en), 6 directions; evaluated: all ordered pairs, 12 directions; "
        "zero-shot: 6 (it-nl it-ro nl-it nl-ro ro-it ro-nl)")
    assert got["flores10_lsl", "directions"].endswith("90 directions; zero-shot: none")
    lsl_zs = got["flores10_lsl_zeroshot", "directions"]
    assert "44 directions (groups EUR: de en es fr it pt; CJK: ja ko zh; SW: sw)" in lsl_zs and \
        lsl_zs.endswith("zero-shot: 46")
    exp = PARAMS.get("opus15")
    changed = dataclasses.replace(exp, data=dataclasses.replace(exp.data, train_directions="all"))
    params = dataclasses.replace(PARAMS, experiments={**PARAMS.experiments, "opus15": changed})
    assert "trained: all ordered pairs, 240 directions" in render(params) and render(params) != render(PARAMS)


def test_x_elm_ner_qa_and_every_method_are_in_the_protocol() -> None:
    """PROTOCOL.md covers x-elm (mc4_xelm), the NER / QA fine-tuning (xlmr_tasks) and the settings of every method
    each translation experiment trains, each row with its source."""
    from lsnmt.protocol import lm, methods, tasks

    text = render(PARAMS)
    assert "## mc4_xelm (xelm)" in text and "## xlmr_tasks: wikiann (lmsfd)" in text and \
        "## xlmr_tasks: tydiqa (lmsfd)" in text
    assert "| optimizer | Adam betas (0.9, 0.95), eps 1e-06, weight decay 0, clip 1, fp16 (loss scale from 128) |" \
        in text
    assert "| typology | lang2vec syntax_average, minimal, single linkage |" in text
    for paper, names in PAPER_MT.items():
        for name in names:
            got = methods.rows(PARAMS.get(name), paper)
            assert [r[0] for r in got] == list(PARAMS.get(name).methods or ()), name
            assert all(r[3].strip() for r in got), (name, [r for r in got if not r[3].strip()])
    assert "| lms | lms | rank 32 |" in text  # iwslt14's LMS, d = 32 (LMS-FD Sec. 5.2)
    assert all(source.strip() for _, _, source in lm.rows(PARAMS.get("mc4_xelm")))
    for cfg in PARAMS.get("xlmr_tasks").task_cfg.values():
        assert all(source.strip() for _, _, source in tasks.rows(cfg))


def test_rows_that_were_mis_sourced() -> None:
    """The values the papers leave open now name where they come from: CLM / LSL warm up from fairseq's 0 (no
    start in the papers), LSL's down-sampling is App. B's one-off draw, OPUS-15's single accumulation step is its
    script's (App. A says 4 for OPUS-100), CLM's 99-token cap is fairseq's --max-target-positions 100."""
    got = {(name, setting): (value, source) for _, name, setting, value, source in rows(PARAMS)}
    for name in ("opus100_clm_enxx", "wmt14_xxen", "flores10_lsl"):
        value, source = got[name, "lr schedule"]
        assert value.endswith("warm-up from 0") and "fairseq's inverse_sqrt default, 0" in source, name
    value, source = got["flores10_lsl", "sampling"]
    assert value.endswith("drawn once") and "one-off down-sampling" in source
    value, source = got["flores10_lsl", "cleaning"]
    assert value.endswith("<= 3 (SentencePiece pieces)") and "M2M-100 scripts" in source
    assert "runs/train_opus_15.sh (FREQ=1)" in got["opus15", "batch"][1] and "x 1 accumulation" in got["opus15",
                                                                                                          "batch"][0]
    assert "train_opus_15.sh (FREQ=1)" not in got["opus100", "batch"][1]
    value, source = got["opus100_clm_enxx", "max length"]
    assert value.endswith("at most 99 tokens") and "--max-target-positions 100" in source
