"""The papers' central claim at small scale, measured (``claim`` stage; ours only, no paper counterpart).

LMS-FD Sec. 1 and LSL Sec. 1: a shared multilingual model runs short of capacity for all its languages, and
language-specific (LS) parameters on top of it recover quality: LMS (LMS-FD Sec. 2) and LSL (LSL Sec. 3) beat
the naive model, and FD-Share, the shared route of Fuse Distillation (LMS-FD Sec. 3), lands between naive and
LMS (LMS-FD Tables 2-3). Here, on the synthetic task of :mod:`lsnmt.data.synthetic` (``experiments.<exp>.claim``):

* every method trains the same base Transformer (``claim.model``) with the real trainer for the same updates,
  once per seed; LS methods add their parameters on top (``setup``, ``measure``);
* every system (a method through one route: FD and LMS+FD through both) translates the held-out test sentences
  of every supervised direction with ``translate``'s loader and beam search;
* the tested corpus of a system is its hypotheses over all seeds and directions, ``n = |seeds| x |directions| x
  test`` items, scored as one corpus: BLEU (sacreBLEU on token ids as words, ``tokenize none``) and exact match
  ``EM = 100 / n * sum_i 1[h_i = r_i]`` (``stats``);
* each system is tested against naive by the paired bootstrap of :mod:`lsnmt.eval.significance` (``B``
  resamples of the n items, the same for both systems): ``delta``, ``p``, and the 95 % interval of the
  resampled deltas (2.5 and 97.5 percentiles); exact match on the same resamples;
* an ordering "A > B" is *shown* when ``delta > 0``, ``p < alpha`` and A beats B on every seed on its own;
  degenerate outputs (:mod:`lsnmt.eval.degenerate`) get no verdict. Otherwise it is *not shown*, with the reason.

What is compared is equal shared capacity at equal updates (``claim.train.max_steps``), not convergence: whether
a gap is the shared model's capacity or its learning speed shows only with more updates (or a wider model).
"""
