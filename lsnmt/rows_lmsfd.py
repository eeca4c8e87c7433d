"""The LMS-FD paper's method rows (Xu et al. 2023, Tables 1, 2, 3, 6 and 9), appended to ``PAPER_ROWS``.

Each row builds the method on the meta device with the config the paper states and
compares training and "Inference" parameters. The paper's inference column counts
what a model serving every direction through its inference route stores (FD-LS keeps
all language FFNs but drops the shared one: 161M -> 149M), i.e. our *deployed* count.
Table 9 gives extra training parameters over the naive model (``counts="extra"``).

Language counts: IWSLT'14 9 (8 pairs + en; LMS's 58M = 48M + 2 * 9 * 12 * 32 * 1536
needs 9), OPUS-100 95 ("94 languages plus English", Sec. 5.2: LMS d=64's 989M needs
95 = (989 - 242)M / (2 * 12 * 64 * 5120)), OPUS-15 16.
"""

from __future__ import annotations

from typing import Any

from lsnmt.config import ModelConfig
from lsnmt.paper_row import LMS_PAPER as _LMS
from lsnmt.paper_row import PaperRow
from models.ls.clsr import CLSRConfig
from models.ls.fd import FDConfig
from models.ls.lms import LMSConfig, LMSFDConfig
from models.ls.switch import SwitchConfig

M = 10**6
# Pre-norm as the authors' released scripts (fe1ixxu/LMS_FD runs/*.sh: --encoder/decoder-normalize-before): the final
# encoder and decoder LayerNorms add 4 d parameters (2K-4K, far below the papers' rounding).
SMALL, BIG, BASE = (ModelConfig(arch=a, normalize_before=True)
                    for a in ("transformer_small", "transformer_big", "transformer_base"))
EXP = {"iwslt14": (SMALL, 32_000, 9), "opus100": (BIG, 64_000, 95), "opus15": (BASE, 32_000, 16)}

NOTE_FD = ("Sec. 3.1: every FFN becomes L=9 language FFNs plus one shared FFN (12 layers x 10 FFNs of 1.05M). "
           "Inference column = parameters deployed for all directions: FD keeps the shared FFN (48M), FD-LS the 9 "
           "language FFNs without the shared one (161M - 12.6M = 149M).")
NOTE_LMS = ("Sec. 2.2: 2 L N d (c + r) extra parameters, LMS on fc1 and fc2 of all N=12 FFNs, Wv (r x d) and Wf "
            "(d x c) per language; LMS+FD adds one shared pair (2 N d (c + r)). Inference = deployed parameters of "
            "the route: Share keeps only the shared pair, LS all language factors. OPUS-100 counts need L=95 (94 "
            "pairs + en); Table 3 prints LMS+FD-LS inference = training (996M/431M), Table 2 drops the shared pair "
            "(58M): our deployed LS count (989M/429M) is within 0.7% of either.")
NOTE_SWITCH = ("Sec. 5.1: E experts in every second layer (fairseq moe_freq 2: 3 encoder + 3 decoder layers), each "
               "replacing the FFN, router D x E. Table 9 (E=4/8/12/16 -> 38/88/138/189M extra on OPUS-15) and Table 3 "
               "(1002M = 242M + 760M) both fix (E - 1) extra FFNs per MoE layer in 6 layers (ours: 37.8/88.2/138.6/"
               "189.0M, 997.4M).")
NOTE_SWITCH_IWSLT = (NOTE_SWITCH + " IWSLT'14's 149M does not follow: the same reading gives 142.5M (-4.4%); 149M "
                     "needs 96 extra FFNs (16 per MoE layer, i.e. the dense FFN kept beside 16 experts), which would "
                     "put Table 3 at 1048M (+4.6%) and Table 9's E=16 at 201M (+6.7%). No reading fits all three "
                     "tables; we keep the one Tables 3 and 9 confirm.")
NOTE_CLSR = ("CLSR (Zhang et al. 2021), p=0.3: a d x d target-language matrix per language after each gated sublayer "
             "(shared across the encoder and across the decoder for CLSR, one per sublayer for CLSR*), gate "
             "Linear(d,128)-ReLU-Linear(128,1) per sublayer. CLSR* 105M = 48M + 24 x 9 x 512^2 fixes 24 gated "
             "sublayers: encoder self-attention and FFN, decoder self-attention and FFN (with cross-attention, 30 "
             "sublayers give 120.7M, +15%). OPUS-100: 242M + 2 x 95 x 1024^2 + 24 gates = 444.3M (443M).")
NOTE_CLSR_IWSLT = (NOTE_CLSR + " IWSLT'14 CLSR: 47.9M + 2 x 9 x 512^2 = 52.6M matches 53M without gates; the 24 "
                   "gates (65.8K each) add 1.58M (54.2M, +2.3%). The gate size is the brief's (128 hidden); with it "
                   "no sublayer set gives 53M +-2% while CLSR* stays at 105M.")
NOTE_T6 = ("Table 6, OPUS-15, transformer_base, d=20, L=16. 'att' = q, k, v, out of the self-attentions only (12 "
           "modules): 77M/96M need 12 x 16 x 4 x 20 x 1024 = 15.7M; adding the 6 decoder cross-attentions would give "
           "84.1M/103.8M (+9%/+8%). The text says 'the attention layer' without naming cross-attention.")
NOTE_T9 = ("Table 9: extra training parameters over the naive OPUS-15 model (transformer_base, L=16). LMS: "
           "2 x 16 x 12 x d x 2560; Switch: see the Switch note.")


def _row(table: str, exp: str, method: str, kind: str | None, cfg: Any, train: float, infer: float, note: str,
         **kw: Any) -> PaperRow:
    model, vocab, langs = EXP[exp]
    return PaperRow(paper=_LMS, table=table, experiment=exp, method=method, model=model, vocab_size=vocab,
                    num_languages=langs, paper_train_params=round(train * M), paper_inference_params=round(infer * M),
                    kind=kind, cfg=cfg, inference="deployed", note=note, **kw)


SELF_FFN = CLSRConfig(sublayers=("self", "ffn"))


def _main_rows() -> list[PaperRow]:
    i, o = "iwslt14", "opus100"
    rows = [
        _row("1", i, "fd", "fd", FDConfig(route="share"), 161, 48, NOTE_FD),
        _row("1", i, "fd-ls", "fd", FDConfig(route="ls"), 161, 149, NOTE_FD),
        _row("2", i, "switch", "switch", SwitchConfig(experts=16), 149, 149, NOTE_SWITCH_IWSLT, explained_miss=True),
        _row("2", i, "clsr", "clsr", SELF_FFN, 53, 53, NOTE_CLSR_IWSLT, explained_miss=True),
        _row("2", i, "clsr*", "clsr", CLSRConfig(sublayers=("self", "ffn"), share=False), 105, 105, NOTE_CLSR),
        _row("2", i, "lms-langwise", "lms", LMSConfig(rank=32, synthesis="language"), 58, 58, NOTE_LMS),
        _row("2", i, "lms", "lms", LMSConfig(rank=32), 58, 58, NOTE_LMS),
        _row("2", i, "lms+fd-share", "lms_fd", LMSFDConfig(rank=32, route="share"), 60, 49, NOTE_LMS),
        _row("2", i, "lms+fd-ls", "lms_fd", LMSFDConfig(rank=32, route="ls"), 60, 58, NOTE_LMS),
        _row("3", o, "switch", "switch", SwitchConfig(experts=16), 1002, 1002, NOTE_SWITCH),
        _row("3", o, "clsr", "clsr", SELF_FFN, 443, 443, NOTE_CLSR),
        _row("3", o, "lms-langwise-d64", "lms", LMSConfig(rank=64, synthesis="language"), 989, 989, NOTE_LMS),
        _row("3", o, "lms-d64", "lms", LMSConfig(rank=64), 989, 989, NOTE_LMS),
        _row("3", o, "lms+fd-share-d64", "lms_fd", LMSFDConfig(rank=64, route="share"), 996, 250, NOTE_LMS),
        _row("3", o, "lms+fd-ls-d64", "lms_fd", LMSFDConfig(rank=64, route="ls"), 996, 996, NOTE_LMS),
        _row("3", o, "lms-d16", "lms", LMSConfig(rank=16), 429, 429, NOTE_LMS),
        _row("3", o, "lms+fd-share-d16", "lms_fd", LMSFDConfig(rank=16, route="share"), 431, 244, NOTE_LMS),
        _row("3", o, "lms+fd-ls-d16", "lms_fd", LMSFDConfig(rank=16, route="ls"), 431, 431, NOTE_LMS),
        _row("3", o, "lms-d4", "lms", LMSConfig(rank=4), 289, 289, NOTE_LMS),
    ]
    return rows


def _ablation_rows() -> list[PaperRow]:
    rows = [
        _row("6", "opus15", "naive", None, None, 61, 61, NOTE_T6),
        _row("6", "opus15", "lms-ffn-d20", "lms", LMSConfig(rank=20), 80, 80, NOTE_T6),
        _row("6", "opus15", "lms-att-d20", "lms", LMSConfig(rank=20, where="attention"), 77, 77, NOTE_T6),
        _row("6", "opus15", "lms-att+ffn-d20", "lms", LMSConfig(rank=20, where="both"), 96, 96, NOTE_T6),
    ]
    for e, extra in {4: 38, 8: 88, 12: 138, 16: 189}.items():
        rows.append(_row("9", "opus15", f"switch-e{e}", "switch", SwitchConfig(experts=e), extra, extra, NOTE_T9
                         + " " + NOTE_SWITCH, counts="extra"))
    for d, extra in {4: 4, 12: 12, 20: 20, 28: 28, 36: 36, 44: 43, 52: 51, 60: 59}.items():
        rows.append(_row("9", "opus15", f"lms-d{d}", "lms", LMSConfig(rank=d), extra, extra, NOTE_T9,
                         counts="extra"))
    return rows


LMSFD_ROWS: tuple[PaperRow, ...] = (*_main_rows(), *_ablation_rows())
