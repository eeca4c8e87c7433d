"""Cross-lingual expert language models (x-elm; Blevins et al., *Breaking the Curse of Multilinguality with
Cross-lingual Expert Language Models*).

The pipeline, one stage per step of the paper (``stages/lm_*.py``, ``stages/cluster.py``)::

    lm_data     monolingual documents per language -> text + token shards      data/{exp}/lm
    cluster     TF-IDF balanced k-means and lang2vec typology clusters (Sec. 3.2)  results/{exp}/xelm/cluster
    lm_seed     the dense seed LM: XGLM-1.7B's weights (init: xglm,           results/{exp}/xelm/seed
                lsnmt.xelm.xglm) or one trained here (init: scratch)
    lm_expert   one job per expert: branch from the seed, train on its cluster   results/{exp}/xelm/experts/{id}
                (x-BTM Sec. 3.1; dense-k1-e0 is the k=1 dense baseline)
    lm_hmr      one job per new language: branch from the donor's typology      results/{exp}/xelm/hmr/{lang}
                expert, train on donor + target (HMR, Sec. 4 and 6.3)
    lm_lapt     dense continued training on every target and donor (LAPT)      results/{exp}/xelm/lapt
    lm_eval     perplexities: top-1, TF-IDF ensembles, sparse ensembles, HMR    results/{exp}/xelm/eval
    lm_icl      in-context XNLI / XStoryCloze / PAWS-X (Sec. 7)                 results/{exp}/xelm/icl

Settings: ``experiments.<exp>.xelm`` (:mod:`lsnmt.xelm.config`).
"""
