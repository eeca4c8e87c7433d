"""FD and LMS+FD (Xu et al. 2023 v1, Sec. 3-4): routes, the two-pass losses (Eq. 2-4) and the trainer seam."""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm
import torch

from lsnmt.train.loss import label_smoothed_nll_loss
from lsnmt.train.trainer import train
from models.build import build_transformer
from models.lang import LangContext
from models.ls.distill import fd_criterion, lms_fd_criterion
from models.ls.fd import FDFFN, FDConfig
from models.ls.lms import LMSFDConfig
from tests.models.helpers import PAD, random_batch, tiny_config
from tests.train.helpers import make_bin, tiny_experiment

EPS = 0.1


class Batch:
    def __init__(self, seed: int = 1) -> None:
        self.src_tokens, self.prev_output_tokens = random_batch(3, 6, 5, 13, seed)
        self.target = torch.roll(self.prev_output_tokens, -1, 1)
        self.target[0, -2:] = PAD  # some padded targets
        self.langs = LangContext.single(0, 2, 3)


def _model(kind: str, cfg: object) -> torch.nn.Module:
    torch.manual_seed(0)
    model = build_transformer(tiny_config(), vocab_size=13, num_languages=3, method=kind, method_cfg=cfg)
    with torch.no_grad():  # LMS+FD: make the flat matrices matter
        for name, p in model.named_parameters():
            if name.endswith(("lms_f", "shared_f")):
                p.normal_(0, 0.3)
    return model.train()  # dropout is 0 in tiny_config: both passes are deterministic


def _by_hand(model: torch.nn.Module, b: Batch) -> tuple[torch.Tensor, ...]:
    lps = [torch.log_softmax(model(b.src_tokens, b.prev_output_tokens, b.langs.with_(route=r)), -1)
           for r in ("ls", "share")]
    ce = [label_smoothed_nll_loss(lp, b.target, EPS, PAD)[0] for lp in lps]
    mask = b.target.ne(PAD).unsqueeze(-1)
    kl_ls_sh = (lps[0].exp() * (lps[0] - lps[1]) * mask).sum()
    kl_sh_ls = (lps[1].exp() * (lps[1] - lps[0]) * mask).sum()
    return ce[0], ce[1], kl_ls_sh, kl_sh_ls


def _expert(ffn: FDFFN, lang: int, x: torch.Tensor) -> torch.Tensor:
    """Language ``lang``'s FFN, from its slices of the grouped experts' weights (Vaswani et al. eq. 2)."""
    e = ffn.experts
    h = torch.relu(x @ e.fc1.weight[lang].T + e.fc1.bias[lang])
    return h @ e.fc2.weight[lang].T + e.fc2.bias[lang]


def test_fd_routes_pick_language_experts_and_shared_ffn() -> None:
    model = _model("fd", FDConfig())
    enc_ffn, dec_ffn = model.encoder.layers[0].ffn, model.decoder.stacks[0].layers[0].ffn
    assert isinstance(enc_ffn, FDFFN) and isinstance(dec_ffn, FDFFN)
    x, langs = torch.randn(2, 3, 16), LangContext.single(1, 2, 2)
    torch.testing.assert_close(enc_ffn(x, langs.with_(route="ls")), _expert(enc_ffn, 1, x))  # source
    torch.testing.assert_close(dec_ffn(x, langs.with_(route="ls")), _expert(dec_ffn, 2, x))  # target
    torch.testing.assert_close(dec_ffn(x, langs), dec_ffn.shared(x, langs))  # configured route: share
    mixed = LangContext(torch.tensor([0, 1]), torch.tensor([1, 0]), route="ls")
    torch.testing.assert_close(enc_ffn(x, mixed)[1], _expert(enc_ffn, 1, x[1:])[0])


def test_fd_loss_matches_eq3_and_kl_does_not_reach_ls_modules() -> None:
    model, b = _model("fd", FDConfig()), Batch()
    loss, nll, ntok = fd_criterion(model, b, EPS, PAD)
    ce_ls, ce_sh, kl, _ = _by_hand(model, b)
    torch.testing.assert_close(loss, 0.5 * (ce_ls + ce_sh) + kl)
    assert ntok == int(b.target.ne(PAD).sum()) and float(kl.detach()) > 0
    loss.backward()
    with_kl = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    ce_ls, ce_sh, _, _ = _by_hand(model, b)
    (0.5 * (ce_ls + ce_sh)).backward()
    experts = [n for n in with_kl if ".experts." in n]
    assert experts and all(torch.allclose(with_kl[n], dict(model.named_parameters())[n].grad) for n in experts)
    shared = [n for n in with_kl if ".shared." in n]
    assert any(not torch.allclose(with_kl[n], dict(model.named_parameters())[n].grad) for n in shared)


def test_lms_fd_loss_is_symmetric_kl() -> None:
    model, b = _model("lms_fd", LMSFDConfig(rank=2)), Batch()
    loss, _, _ = lms_fd_criterion(model, b, EPS, PAD)
    ce_ls, ce_sh, kl1, kl2 = _by_hand(model, b)
    torch.testing.assert_close(loss, 0.5 * (ce_ls + ce_sh) + 0.5 * (kl1 + kl2))
    loss.backward()  # no stop-gradient: the LS factors learn from the KL term too
    g_kl = {n: p.grad.clone() for n, p in model.named_parameters() if n.endswith("lms_v")}
    model.zero_grad()
    ce_ls, ce_sh, _, _ = _by_hand(model, b)
    (0.5 * (ce_ls + ce_sh)).backward()
    assert any(not torch.allclose(g, dict(model.named_parameters())[n].grad) for n, g in g_kl.items())


def test_trainer_runs_a_two_pass_criterion(tmp_path: Path) -> None:
    import functools

    bin_dir = make_bin(tmp_path / "bin")
    exp = tiny_experiment(max_steps=2, validate_every=2, save_every=2)
    factory = functools.partial(build_transformer, method="fd", method_cfg=FDConfig())
    out = train(exp, bin_dir, tmp_path / "out", tmp_path / "work", model_factory=factory, criterion=fd_criterion)
    assert out["step"] == 2 and (tmp_path / "out" / "model.pt").is_file()


@pytest.mark.parametrize(("kind", "entry"), [("fd", {"kind": "fd"}), ("lms_fd", {"kind": "lms_fd", "rank": 2})])
def test_both_routes_are_decoded_from_one_model(tmp_path: Path, kind: str, entry: dict) -> None:
    """translate@<method> decodes the one model.pt through its configured route into its folder and through the
    other into ``<route>/``; each file is what that route of the same in-memory weights decodes (Sec. 3.2, 5)."""
    from lsnmt.data.corpus import Vocab, load_split
    from lsnmt.decode.translate import translate_direction, translate_method
    from lsnmt.methods import resolve, systems, with_route
    from tests.data.helpers import experiment
    from tests.eval.helpers import flores, loaded, train_spm, translate_view
    from tests.train.helpers import LANGS, TINY_MODEL, VOCAB, write_direction

    exp = experiment(LANGS, model={**TINY_MODEL, "dropout": 0.0}, decode={"beam": 2, "max_len_b": 6},
                     method_cfg={kind: entry})
    bin_dir = make_bin(tmp_path / "bin")
    rng = torch.Generator().manual_seed(0)
    for s, t in exp.data.eval_pairs:
        src = [torch.randint(4, VOCAB, (int(n),), generator=rng).tolist() for n in range(3, 9)]
        write_direction(bin_dir, "test", f"{s}-{t}", src, src)
    train_spm(tmp_path / "spm", [x for lang in LANGS for x in flores(lang, 100, "dev")])  # ids < VOCAB decode
    torch.manual_seed(0)
    model = build_transformer(exp.model, vocab_size=VOCAB, num_languages=3, padding_idx=PAD, method=kind,
                              method_cfg=resolve(exp.method_cfg, kind)[1])
    with torch.no_grad():  # LMS+FD: make the flat matrices matter
        for name, p in model.named_parameters():
            if name.endswith(("lms_f", "shared_f")):
                p.normal_(0, 0.3)
    torch.save({"model": model.state_dict()}, tmp_path / "model.pt")

    counts = translate_method(translate_view(exp), exp.name, kind, tmp_path / "model.pt", tmp_path / "spm", bin_dir,
                              tmp_path / "out")
    assert list(counts) == [s.name for s in systems(exp.method_cfg, kind)] == [kind, f"{kind}_ls"]
    vocab = Vocab.load(bin_dir)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "spm" / "spm.model"))
    decoded = {}
    for route, folder in (("share", tmp_path / "out"), ("ls", tmp_path / "out" / "ls")):
        ref = build_transformer(exp.model, vocab_size=VOCAB, num_languages=3, padding_idx=PAD, method=kind,
                                method_cfg=with_route(kind, resolve(exp.method_cfg, kind)[1], route))
        ref.load_state_dict(model.state_dict())  # the same weights, read through `route`
        net = loaded(exp, kind, tmp_path / "model.pt", vocab, route=None if route == "share" else route)
        assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), model.state_dict().values(),
                                                      strict=True))
        for direction in load_split(bin_dir, "test", exp.data.eval_pairs, vocab):
            cpu = torch.device("cpu")
            hyps = translate_direction(ref.eval(), direction, exp.decode, vocab, cpu, exp.train.max_steps)
            want = [sp.decode(h) for h in hyps]
            assert (folder / f"{direction.name}.hyp").read_text().splitlines() == want
            decoded[route, direction.name] = want
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["de-en.hyp", "en-de.hyp", "en-fr.hyp",
                                                                    "fr-en.hyp", "length_limit.json", "ls"]
    assert any(decoded["share", d] != decoded["ls", d] for _, d in decoded)  # the routes really differ
