"""Stage ``lm_expert``: branch one expert from the seed and train it on its cluster (x-BTM; lsnmt.xelm.jobs).

    python -m stages.lm_expert --experiment default --expert typology-k4-e0 \
        --log logs/default/xelm/lm_expert/typology-k4-e0.log

``--expert`` is one of params.yaml's ``xelm_experts`` (``dense-k1-e0`` is the k = 1 dense baseline), the ids the
``xelm`` section implies. Reads ``xelm`` only (:class:`lsnmt.xelm.config.XelmView`). Each expert is an independent
job. Resumable state: ``work/{exp}/xelm/ckpt/{expert}``.
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.base import Each, Job, run_stage
from lsnmt.xelm import jobs
from lsnmt.xelm.config import XelmView, expert_ids
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm

VIEW = XelmView
EACH = Each("expert", "xelm_experts", lambda _path, _exp, view: expert_ids(view.xelm) if view.xelm else ())


def _expert(view: XelmView, job: Job, argv: list[str]) -> None:
    exp, expert, cfg = job.experiment, str(job.item), view.xelm
    assert cfg is not None  # EACH: an experiment without xelm has no expert
    launch.relaunch(cfg, argv, "stages.lm_expert", "xelm")  # several ranks: this job under torchrun
    lm_dir = P.at(P.LM, exp)
    train = jobs.expert_job(cfg, expert, lm_dir, P.at(P.CLUSTER, exp), P.at(P.SEED, exp) / "model.pt")
    train_lm(train, cfg.lm, lm_dir, load_meta(lm_dir), P.at(P.LM_CKPT, exp, job=expert),
             P.at(P.EXPERT, exp, expert=expert), threads=cfg.threads)
    record.write(P.at(P.EXPERT, exp, expert=expert))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_stage("lm_expert", VIEW, lambda view, job: _expert(view, job, args), args, each=EACH)


if __name__ == "__main__":
    main()
