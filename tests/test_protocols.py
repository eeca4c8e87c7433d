"""The paper experiments of params.yaml follow the protocols the papers (and the LMS-FD authors' scripts) state.

Issue 18: settings that make paper-scale numbers comparable, checked on the loaded, typed experiments.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lsnmt.experiment.params import Params

ROOT = Path(__file__).resolve().parent.parent
PARAMS = Params.load(ROOT / "params.yaml")
LMSFD_MT = ("iwslt14", "opus100", "opus15")
"""The LMS-FD translation experiments (``papers.lmsfd`` less the XLM-R tasks)."""
FAIRSEQ_PAPER_MT = (*LMSFD_MT, *PARAMS.papers["clm"], *PARAMS.papers["lsl"])


@pytest.mark.parametrize("name", LMSFD_MT)
def test_lmsfd_experiments_use_the_authors_recipe(name: str) -> None:
    """fe1ixxu/LMS_FD runs/train_opus_100.sh, train_opus_100_baseline.sh, train_opus_15.sh: pre-norm, attention
    dropout 0.1, relu dropout 0, dropout 0.1, Adam eps 1e-6 and betas (0.9, 0.98), warm-up from 1e-7, positions 512."""
    exp = PARAMS.get(name)
    assert name in PARAMS.papers["lmsfd"]
    assert exp.model.normalize_before is True
    assert (exp.model.dropout, exp.model.attention_dropout, exp.model.activation_dropout) == (0.1, 0.1, 0.0)
    assert exp.train.adam_eps == 1e-6 and tuple(exp.train.adam_betas) == (0.9, 0.98)
    assert exp.train.warmup_init_lr == 1e-7 and exp.train.weight_decay == 0.0 and exp.train.clip_norm == 0.0
    assert (exp.train.max_source_positions, exp.train.max_target_positions) == (512, 512)
    assert (exp.decode.beam, exp.decode.lenpen) == (5, 1.0)


@pytest.mark.parametrize("name", FAIRSEQ_PAPER_MT)
def test_decoding_length_is_fairseqs_default(name: str) -> None:
    """fairseq-generate's max_len_a 0, max_len_b 200: none of the three MT papers sets another."""
    exp = PARAMS.get(name)
    assert (exp.decode.max_len_a, exp.decode.max_len_b) == (0.0, 200)


@pytest.mark.parametrize("name", PARAMS.papers["lsl"])
def test_lsl_experiments_use_no_regularization(name: str) -> None:
    """LSL Sec. 4.1 "we do not use any regularization": no dropout, no weight decay, no label smoothing; App. B:
    temperature 5 between data sources only, natural proportions between directions (our assumption)."""
    exp = PARAMS.get(name)
    assert exp.train.label_smoothing == 0.0 and exp.train.weight_decay == 0.0
    assert (exp.model.dropout, exp.model.attention_dropout, exp.model.activation_dropout) == (0.0, 0.0, 0.0)
    assert exp.sample.temperature == 1.0
    assert exp.sample.per_source.downsample == ("ccmatrix",) and exp.sample.per_source.temperature == 5.0


@pytest.mark.parametrize("name", PARAMS.papers["clm"])
def test_clm_experiments_use_sentencepiece_bpe(name: str) -> None:
    """CLM Sec. 4.1: BPE with SentencePiece."""
    assert PARAMS.get(name).spm.model_type == "bpe"
