"""The ``xelm`` section: defaults, paper values, and the errors that name the key at fault."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lsnmt.experiment.params import Params
from lsnmt.typed import ConfigError
from lsnmt.xelm.config import ExpertId, expert_ids, hierarchy_sizes
from tests.conftest import ROOT

from .helpers import experiment


def _params(tmp_path: Path, edit) -> Path:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    edit(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_params_yaml_lists_the_jobs_of_its_experiments() -> None:
    params = Params.load(ROOT / "params.yaml")
    default, paper = params.get("default").xelm, params.get("mc4_xelm").xelm
    lm, paper_lm = params.get("default").lm_data, params.get("mc4_xelm").lm_data
    assert default is not None and paper is not None and lm is not None and paper_lm is not None
    assert list(params.xelm_experts) == expert_ids(default) and params.xelm_targets == lm.targets
    assert default.experts.k == (2, 4) and lm.seen(params.get().data.languages) == (
        "en", "de", "fr", "ru", "tr", "hi", "vi", "sw")
    assert paper_lm.targets == ("az", "he", "pl", "sv") and paper_lm.init == "xglm"
    # x-elm Table 4 / App. A.1 / Sec. 6.3
    assert paper.experts.k == (4, 8, 16) and paper.experts.main_k == 8 and paper.experts.lr == 1.5e-4
    assert paper.experts.updates * paper.experts.batch_tokens == 20_000 * 524_288  # 10.5B tokens
    assert paper.hmr.donors == {"az": "tr", "he": "ar", "pl": "ru", "sv": "en"}
    assert (paper.lm.layers, paper.lm.embed_dim, paper.lm.ffn_dim, paper.lm.block_size) == (24, 2048, 8192, 2048)
    assert params.get("iwslt14").xelm is None and params.get("iwslt14").lm_data is None  # `{}`


def test_expert_list_must_match_the_experiment(tmp_path: Path) -> None:
    path = _params(tmp_path, lambda raw: raw["xelm_experts"].pop())
    with pytest.raises(ConfigError, match=r"xelm_experts: \[.*\] differs from what experiment 'default' runs"):
        Params.load(path)


def test_unreachable_k_names_the_key(tmp_path: Path) -> None:
    def edit(raw: dict) -> None:
        raw["experiments"]["default"]["xelm"]["experts"].update(k=[3, 4], batch_tokens=1536)
    with pytest.raises(ConfigError, match=r"experiments\.default\.xelm\.experts\.k\[0\]: 8 languages merge pairwise"):
        Params.load(_params(tmp_path, edit))


def test_section_errors_name_their_key() -> None:
    with pytest.raises(ConfigError, match=r"experiments\.t\.lm_data\.targets: an HMR target must not be"):
        experiment(languages=["en", "de", "sw"])
    with pytest.raises(ConfigError, match=r"xelm\.experts\.batch_tokens: 36 tokens do not split"):
        experiment(experts={"updates": 2, "batch_tokens": 36, "lr": 0.1, "k": [2], "main_k": 2})
    with pytest.raises(ConfigError, match=r"xelm\.ensemble\.top_m\[0\]: m must be in \[1, main_k = 2\)"):
        experiment(ensemble={"top_m": [2]})


def test_ids_and_hierarchy_sizes() -> None:
    assert hierarchy_sizes(16) == [16, 8, 4, 2, 1] and hierarchy_sizes(9) == [9, 5, 3, 2, 1]
    assert str(ExpertId.parse("typology-k8-e3")) == "typology-k8-e3"
    with pytest.raises(ValueError, match="not an expert id"):
        ExpertId.parse("typology-8-3")


def test_mc4_xelm_plans_the_papers_shards() -> None:
    """x-elm Sec. 5.1 / Table 5, a dry run: at most the first 1,024 training shards of en es fr ru, every shard of
    the other languages, and validation from its own source capped at Sec. 5.4's 5,000 documents."""
    from lsnmt.data.sources import mc4

    exp = Params.load(ROOT / "params.yaml").get("mc4_xelm")
    train, valid = (next(s for s in exp.data.sources if s.kind == "mc4" and s.splits == (split,))
                    for split in ("train", "valid"))
    plan = mc4.plan(train, exp.data.languages)
    for lang in ("en", "es", "fr", "ru"):
        urls = plan[("train", lang)]
        assert len(urls) == 1024 and urls[0].endswith(f"c4-{lang}.tfrecord-00000-of-{mc4.SHARDS[lang][0]:05d}.json.gz")
        assert urls[-1].endswith(f"-01023-of-{mc4.SHARDS[lang][0]:05d}.json.gz")
    assert len(plan[("train", "de")]) == 2048 and len(plan[("train", "he")]) == 1024  # mC4 code iw
    assert "-iw." in plan[("train", "he")][0] and set(plan) == {("train", x) for x in exp.data.languages}
    assert sum(map(len, plan.values())) == sum(mc4.SHARDS[mc4.MC4_CODES.get(x, x)][0] for x in exp.data.languages) \
        - (11264 + 2048 + 2048 + 4096 - 4 * 1024)
    assert valid.max_pairs == 5000 and set(mc4.plan(valid, exp.data.languages)) == {
        ("valid", x) for x in exp.data.languages}


def test_every_expert_is_scored_on_every_language(tmp_path: Path) -> None:
    """App. B.3 / Fig. 6: forgetting needs each expert of every k (typology k = 4, 16 too) on every language."""
    from lsnmt.io import write_json
    from lsnmt.xelm.perplexities import model_plan

    exp = Params.load(ROOT / "params.yaml").get("mc4_xelm")
    assert exp.lm_data is not None and exp.xelm is not None
    langs, targets = list(exp.lm_data.languages), list(exp.lm_data.targets)
    write_json(tmp_path / "donors.json", {t: {"donor": d} for t, d in exp.xelm.hmr.donors.items()})
    plan = model_plan(exp.xelm, exp.name, tmp_path, langs, targets)
    for k in (4, 16):
        assert all(plan[f"typology-k{k}-e{e}"][1] == langs + targets for e in range(k))


def test_a_scratch_seed_with_hmr_targets_needs_its_own_tokenizer() -> None:
    """``init: scratch`` without ``lm_data.vocab_size`` would tokenise with the experiment's spm model, trained on the
    HMR targets too: refused, naming the key; with a size (an LM tokenizer of the pretraining languages) or
    without targets it loads."""
    with pytest.raises(ConfigError, match=r"experiments\.t\.lm_data\.vocab_size: init: scratch with HMR targets"):
        experiment(vocab_size=None)
    assert experiment(vocab_size=300).xelm is not None
    assert experiment(vocab_size=None, targets=[], hmr={}).xelm is not None
