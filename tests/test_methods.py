"""Method configuration: params.yaml's method_cfg entries build into typed configs; errors name the key path."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from lsnmt import methods
from lsnmt.experiment.params import Params
from lsnmt.typed import ConfigError
from models.config.kinds import KINDS
from models.ls import criterion
from models.ls.lms import LMSConfig, LMSFDConfig

ROOT = Path(__file__).resolve().parent.parent


def _load(tmp_path: Path, mutate) -> Params:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    mutate(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return Params.load(path)


def _error(tmp_path: Path, mutate) -> str:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, mutate)
    return str(info.value)


def test_every_default_method_can_be_listed(tmp_path: Path) -> None:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    names = list(raw["experiments"]["default"]["method_cfg"])
    assert {"lms", "lms_langwise", "fd", "lms_fd", "switch", "clsr", "clsr_star"} <= set(names)
    params = _load(tmp_path, lambda r: r.__setitem__("methods", ["naive", *names]))
    exp = params.get()
    kinds = {name: methods.resolve(exp.method_cfg, name)[0] for name in params.methods}
    assert kinds["naive"] is None and set(kinds.values()) - {None} == set(KINDS)
    assert methods.resolve(exp.method_cfg, "lms_fd")[1] == LMSFDConfig(rank=8, route="share")
    assert criterion("fd") is not None and criterion("lms") is None


CLM_DEFAULTS = ("sclm", "mclm", "sclm_e", "sclm_d", "mclm_e", "mclm_d", "clm_dedicated", "sclm_top", "mclm_top",
                "clm_ls", "adapter", "deep")


def test_every_default_clm_method_can_be_listed_and_built(tmp_path: Path) -> None:
    """The CLM issue's methods are defined for the default experiment and run in `default_all` (the default
    runs sCLM, one method per family)."""
    import torch

    from models.build import build_transformer
    from models.ls.clm import CLMConfig

    params = _load(tmp_path, lambda r: r.__setitem__("methods", ["naive", *CLM_DEFAULTS]))
    exp = params.get()
    kinds = {name: methods.resolve(exp.method_cfg, name)[0] for name in CLM_DEFAULTS}
    assert set(kinds.values()) == {"clm", "adapter", "deep"}
    assert methods.resolve(exp.method_cfg, "clm_dedicated")[1] == CLMConfig(features=8, encoder="sclm", decoder="mclm")
    for name in CLM_DEFAULTS:
        with torch.device("meta"):
            build_transformer(exp.model, vocab_size=100, num_languages=len(exp.data.languages),
                              method=kinds[name], method_cfg=methods.resolve(exp.method_cfg, name)[1])
    main = Params.load(ROOT / "params.yaml")
    assert "sclm" in main.methods and set(CLM_DEFAULTS) <= set(main.jobs_of("default_all", "methods"))


def test_paper_experiments_use_the_papers_settings() -> None:
    params = Params.load(ROOT / "params.yaml")
    assert methods.resolve(params.get("iwslt14").method_cfg, "lms")[1] == LMSConfig(rank=32)
    assert methods.resolve(params.get("opus100").method_cfg, "lms_d4")[1] == LMSConfig(rank=4)
    switch = methods.resolve(params.get("iwslt14").method_cfg, "switch")[1]
    assert (switch.experts, switch.every, switch.balance_weight) == (16, 2, 0.01)
    assert methods.resolve(params.get("opus100").method_cfg, "clsr")[1].budget == 0.3


def test_wrong_type_names_the_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["method_cfg"]["lms"].__setitem__("rank", "x"))
    assert "experiments.default.method_cfg.lms.rank: expected int, got str 'x'" in msg


def test_unknown_kind_and_key(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["method_cfg"].__setitem__("m", {"kind": "lora"}))
    assert ("experiments.default.method_cfg.m.kind: unknown kind 'lora' (known kinds: adapter, clm, clsr, deep, fd, "
            "lms") in msg
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["method_cfg"]["fd"].__setitem__("rank", 2))
    assert "experiments.default.method_cfg.fd.rank: unknown key" in msg


def test_listed_method_must_be_defined(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r.__setitem__("methods", ["naive", "nope"]))
    assert "methods[1]: 'nope' is not a key of experiments.default.method_cfg" in msg


def test_an_experiments_own_methods_must_be_defined(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["experiments"]["opus15"].__setitem__("methods", ["naive", "fd"]))
    assert "experiments.opus15.methods[1]: 'fd' is not a key of experiments.opus15.method_cfg" in msg


def test_selecting_an_experiment_with_its_own_methods_needs_the_same_top_level_list(tmp_path: Path) -> None:
    """dvc.yaml's matrix is the top-level list: DVC and the stages must agree on what runs."""
    msg = _error(tmp_path, lambda r: r.__setitem__("experiment", "wmt14_enxx"))
    assert "methods: ['naive', 'lms'" in msg and "differs from what experiment 'wmt14_enxx' runs" in msg
    assert ("dvc exp run -S experiment=wmt14_enxx -S 'methods=[naive,adapter,clsr,deep,sclm,mclm]' -S 'tasks=[]' "
            "-S 'xelm_experts=[]' -S 'xelm_targets=[]'") in msg

    def select(raw: dict) -> None:
        raw.update(experiment="wmt14_enxx", methods=raw["experiments"]["wmt14_enxx"]["methods"], tasks=[],
                   xelm_experts=[], xelm_targets=[])

    params = _load(tmp_path, select)
    assert params.methods_of("wmt14_enxx") == params.methods == ("naive", "adapter", "clsr", "deep", "sclm", "mclm")
    assert params.methods_of("default") == params.methods  # no list of its own: the top-level one


def test_papers_name_defined_experiments(tmp_path: Path) -> None:
    msg = _error(tmp_path, lambda r: r["papers"].__setitem__("lmsfd", ["iwslt14", "opus1000"]))
    assert "papers.lmsfd[1]: 'opus1000' is not defined under experiments" in msg


def test_an_experiment_without_its_own_list_must_fit_the_top_level_one(tmp_path: Path) -> None:
    """Any experiment runs by name (snakemake --config experiment=X): one that inherits the top-level list must
    define what it names."""
    msg = _error(tmp_path, lambda r: r["experiments"]["iwslt14"].pop("methods"))
    assert "methods[2]: 'sclm' is not a key of experiments.iwslt14.method_cfg" in msg
    assert "experiments.iwslt14 has no own `methods` and inherits the top-level list" in msg
    msg = _error(tmp_path, lambda r: r["experiments"]["iwslt14"].pop("tasks"))
    assert "tasks[0]: 'wikiann' is not a key of experiments.iwslt14.task_cfg (known: none)" in msg


def test_a_two_route_method_is_two_systems_and_owns_its_other_route_name(tmp_path: Path) -> None:
    """FD / LMS+FD: one training, decoded through its configured route (``<name>``) and the other
    (``<name>_<route>``); a method_cfg entry of that name would be a second training of the same model."""
    exp = Params.load(ROOT / "params.yaml").get("opus100")
    assert [(s.name, s.route) for s in methods.systems(exp.method_cfg, "lms_fd_d16")] == [("lms_fd_d16", None),
                                                                              ("lms_fd_d16_ls", "ls")]
    assert [s.name for s in methods.systems(exp.method_cfg, "lms_d16")] == ["lms_d16"]
    ls = methods.systems(exp.method_cfg, "lms_fd_d16")[1]
    assert methods.resolve_system(exp.method_cfg, ls) == ("lms_fd", LMSFDConfig(rank=16, route="ls"))
    assert ls.hyp_dir(Path("results/opus100")) == Path("results/opus100/translate/lms_fd_d16/ls")
    msg = _error(tmp_path, lambda r: r["experiments"]["iwslt14"]["method_cfg"].__setitem__(
        "fd_ls", {"kind": "fd", "route": "ls"}))
    assert "experiments.iwslt14.method_cfg.fd_ls: is the ls route of 'fd', which is trained once" in msg


def test_naive_has_its_own_entry(tmp_path: Path) -> None:
    """``train@naive`` tracks ``method_cfg.naive`` (lsnmt/graph/stages.py): the entry is written, without settings."""
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["method_cfg"].pop("naive"))
    assert "methods[0]: 'naive' is not a key of experiments.default.method_cfg" in msg and "naive: {kind: naive}" in msg
    msg = _error(tmp_path, lambda r: r["experiments"]["default"]["method_cfg"].__setitem__("naive", {"kind": "lms"}))
    assert "method_cfg.naive: `naive` is the plain model" in msg


def test_a_top_w_sweep_is_one_system_per_w_decoded_from_the_same_training(tmp_path: Path) -> None:
    """CLM Figure 4 (Sec. 5.4): ``sweep_top_w`` decodes the trained sCLM again with each ``w``, as the systems
    ``<name>_w<w>`` in ``translate/<name>/w<w>/``; a method_cfg entry of that name would be a second training."""
    from models.ls.clm import CLMConfig

    params = Params.load(ROOT / "params.yaml")
    for name in ("opus100_clm_enxx", "opus100_clm_xxen"):
        exp = params.get(name)
        ws = methods.resolve(exp.method_cfg, "sclm")[1].sweep_top_w
        assert ws and ws[-1] < methods.resolve(exp.method_cfg, "sclm")[1].features
        got = methods.systems(exp.method_cfg, "sclm")
        assert [s.name for s in got] == ["sclm", *(f"sclm_w{w}" for w in ws)]
        assert [s.top_w for s in got] == [None, *ws] and all(s.method == "sclm" and s.route is None for s in got)
        kind, cfg = methods.resolve_system(exp.method_cfg, got[1])
        assert kind == "clm" and cfg == dataclasses.replace(methods.resolve(exp.method_cfg, "sclm")[1], top_w=ws[0])
        assert got[1].hyp_dir(Path("r")) == Path(f"r/translate/sclm/w{ws[0]}")
        assert got[1].hyp_dir(Path("r"), "test.x") == Path(f"r/translate/sclm/w{ws[0]}/test.x")
    exp = params.get("opus100_clm_enxx")
    assert [s.name for s in methods.systems(exp.method_cfg, "sclm_k94")] == ["sclm_k94"]  # no sweep: one system
    with pytest.raises(ValueError, match="only a CLM model"):
        methods.with_top_w("lms", LMSConfig(rank=2), 1)
    assert methods.with_top_w("clm", CLMConfig(features=4), None) == CLMConfig(features=4)
    msg = _error(tmp_path, lambda r: r["experiments"]["opus100_clm_enxx"]["method_cfg"].__setitem__(
        "sclm_w14", {"kind": "clm", "features": 14, "key": "xx"}))
    assert "experiments.opus100_clm_enxx.method_cfg.sclm_w14: is the top-14 sparsity decoding of 'sclm'" in msg
    msg = _error(tmp_path, lambda r: r["experiments"]["opus100_clm_enxx"]["method_cfg"]["sclm"].__setitem__(
        "sweep_top_w", [4, 300]))
    assert "experiments.opus100_clm_enxx.method_cfg.sclm.sweep_top_w[1]: must be in [1, features=280], got 300" in msg
