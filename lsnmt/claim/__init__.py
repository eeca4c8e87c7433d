"""The papers' claims at small scale, measured (``claim`` stage; ours only, no paper counterpart).

LMS-FD Sec. 1 and LSL Sec. 1: a shared multilingual model runs short of capacity for all its languages, and
language-specific (LS) parameters recover quality. The stage tests the papers' own comparisons
(:data:`lsnmt.claim.claims.CLAIMS`, each with its section, table and numbers): LMS beats naive at equal shared
capacity (LMS-FD Table 2); FD-Share beats naive at naive's size (LMS-FD Table 1); LSL beats naive at equal
inference cost (LSL Table 5, a shared decoder) and a naive model of LSL's total size (LSL Table 1); and one
extension labelled ours, LMS against a naive model of LMS's total size (no paper runs it). Here, on the synthetic
task of :mod:`lsnmt.data.synthetic` (``experiments.<exp>.claim``):

* naive trains the base Transformer (``claim.model``); every method trains it with its LS parameters on top; every
  dense baseline (``claim.dense``) trains a wider naive model; all with the real trainer for the same fixed
  budget (``claim.train.max_steps``), once per seed (``task``, ``measure``);
* the parameters of each system are counted: total, shared (used by every direction) and per direction (used by
  one direction at test time), and each claim's condition is checked on them (``claims``);
* every system (a method through one route: FD and LMS+FD through both) translates the held-out test sentences
  of every supervised direction with ``translate``'s loader and beam search;
* the tested corpus of a system is its hypotheses over all seeds and directions, ``n = |seeds| x |directions| x
  test`` items, scored as one corpus: BLEU (sacreBLEU on token ids as words, ``tokenize none``) and exact match
  ``EM = 100 / n * sum_i 1[h_i = r_i]`` (``stats``);
* intervals and p-values are over seeds and sentences, the crossed design (``interval``, Owen 2007): the seeds'
  spread and the spread over sentence resamples (``bootstrap``: each sentence with its outputs in every direction
  and seed, both systems of a comparison on the same resamples), Student's t on seeds - 1 degrees of freedom;
* a claim is *shown* when the 95 % interval of its BLEU difference lies above 0 and it holds on every seed;
  degenerate outputs (:mod:`lsnmt.eval.degenerate`) get no verdict; otherwise it is *not shown* (a result), or
  *not measured* when its system or a baseline meeting its parameter condition is missing.

What is compared is the papers' protocol, equal updates (LMS-FD Sec. 3.2: "the same number of steps"), at a
stated budget; the summary keeps naive's validation curve, which shows how far it still was from converging.
"""
