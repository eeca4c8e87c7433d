"""Stage ``lm_expert``: branch one expert from the seed and train it on its cluster (x-BTM; lsnmt.xelm.jobs).

    python -m stages.lm_expert --experiment default --expert typology-k4-e0 \
        --log logs/default/xelm/lm_expert/typology-k4-e0.log

``--expert`` is one of params.yaml's ``xelm_experts`` (``dense-k1-e0`` is the k = 1 dense baseline). Each
expert is an independent job. Resumable state: ``work/{exp}/xelm/ckpt/{expert}``.
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.stage import run_keyed
from lsnmt.xelm import jobs
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm


def _expert(exp, expert: str, argv: list[str]) -> None:
    launch.relaunch(exp.xelm, argv, "stages.lm_expert", "xelm")  # several ranks: this job under torchrun
    lm_dir = P.at(P.LM, exp.name)
    job = jobs.expert_job(exp, expert, lm_dir, P.at(P.CLUSTER, exp.name), P.at(P.SEED, exp.name) / "model.pt")
    train_lm(job, exp.xelm.lm, lm_dir, load_meta(lm_dir), P.at(P.LM_CKPT, exp.name, job=expert),
             P.at(P.EXPERT, exp.name, expert=expert), threads=exp.xelm.threads)
    record.write(P.at(P.EXPERT, exp.name, expert=expert))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_keyed("lm_expert", "expert", "xelm_experts", lambda exp, expert: _expert(exp, expert, args), args)


if __name__ == "__main__":
    main()
