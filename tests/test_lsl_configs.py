"""params.yaml's LSL settings: the Figure 4 sweep, the searches, the Table 6 zero-shot data, and config errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsnmt import methods
from lsnmt.experiment.params import Params
from lsnmt.report.runs import DEFAULTS
from lsnmt.train.arch_search import searches
from lsnmt.typed import ConfigError
from tests.test_methods import _load

ROOT = Path(__file__).resolve().parent.parent
PARAMS = Params.load(ROOT / "params.yaml")


def test_figure4_sweep_places_half_the_lsls_at_each_end() -> None:
    """App. E: n LSLs = the bottom n/2 layers source-indexed and the top n/2 target-indexed, n = 2 ... 16."""
    exp = PARAMS.get("flores10_lsl")
    for n in range(2, 17, 2):
        _, cfg = methods.resolve(exp.method_cfg, f"lsl_n{n}")
        assert cfg.src == tuple(range(1, n // 2 + 1)) and cfg.tgt == tuple(range(17 - n // 2, 17))
    assert methods.resolve(exp.method_cfg, "lsl_n4")[1] == methods.resolve(exp.method_cfg, "lsl_s12_t15_16")[1]


def test_searches_of_the_lsl_experiment_and_the_default() -> None:
    lsl = searches(PARAMS.get("flores10_lsl").search)
    assert set(lsl) == {"nas", "nas_sd"} and lsl["nas"].seeds == (1, 2, 3) and lsl["nas_sd"].decoder == "shared"
    exp = PARAMS.get("flores10_lsl")
    assert methods.resolve(exp.method_cfg, "lsl_nas_searched")[1].architecture == "nas"
    default = PARAMS.get("default")
    assert set(searches(default.search)) == {"lsl_search"}
    assert "lsl_nas" in PARAMS.methods
    assert methods.resolve(default.method_cfg, "lsl_nas")[1].architecture == "lsl_search"
    searched = {name for name, e in PARAMS.experiments.items() if searches(e.search)}
    assert searched == {*DEFAULTS, "flores10_lsl"}


def test_zero_shot_experiment_trains_english_and_within_group_directions() -> None:
    """Sec. 4.5 / footnote 8: X-EN, EN-X and directions inside EUR, CJK or SW; the rest are zero-shot."""
    exp = PARAMS.get("flores10_lsl_zeroshot")
    group = {lang: g for g, members in exp.data.groups.items() for lang in members}
    trained, evaluated = set(exp.data.train_pairs), set(exp.data.eval_pairs)
    assert len(evaluated) == 90 and trained < evaluated
    assert trained == {(s, t) for s, t in evaluated if "en" in (s, t) or group[s] == group[t]}
    assert len(trained) == 18 + 20 + 6 and len(evaluated - trained) == 46
    assert exp.model.decoder == "shared" and exp.data.sources == PARAMS.get("flores10_lsl").data.sources


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda r: r["experiments"]["default"]["method_cfg"]["lsl_nas"].update(architecture="nope"),
     "experiments.default.method_cfg.lsl_nas.architecture: 'nope' is not a search of experiments.default.search"),
    (lambda r: r["experiments"]["default"]["search"]["lsl_search"].update(seeds=[1, 1]),
     "experiments.default.search.lsl_search.seeds: repeated seed"),
    (lambda r: r["experiments"]["default"]["search"]["lsl_search"].update(layers=3),
     "experiments.default.search.lsl_search.layers: unknown key"),
    (lambda r: r["experiments"]["flores10_lsl_zeroshot"]["data"].pop("groups"),
     "experiments.flores10_lsl_zeroshot.data.groups: en-centric+groups needs the language groups"),
    (lambda r: r["experiments"]["flores10_lsl_zeroshot"]["data"]["groups"].update(X=["xx"]),
     "experiments.flores10_lsl_zeroshot.data.groups.X[0]: 'xx' is not in data.languages"),
])
def test_errors_name_the_key(tmp_path: Path, mutate, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, mutate)
    assert message in str(info.value)
