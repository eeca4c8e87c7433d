"""Stage ``lm_lapt``: the dense LAPT baseline, continued training of the dense model on all new languages and
their donors (x-elm Sec. 6.3; lsnmt.xelm.jobs).

    python -m stages.lm_lapt --experiment default --log logs/default/xelm/lm_lapt.log

Reads ``lm_data`` and ``xelm`` only (:class:`lsnmt.xelm.config.LMTrainView`).
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.io import atomic_dir, write_json
from lsnmt.runner import launch
from lsnmt.runner.base import Job, run_stage
from lsnmt.xelm import jobs
from lsnmt.xelm.config import LMTrainView
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm

VIEW = LMTrainView


def _lapt(view: LMTrainView, job: Job, argv: list[str]) -> None:
    exp = job.experiment
    out, lm_dir = P.at(P.LAPT, exp), P.at(P.LM, exp)
    if not_configured(exp, view.lm_data, out) or view.xelm is None:
        return
    if not view.targets:
        with atomic_dir(out) as tmp:
            write_json(tmp / "status.json", {"status": "not configured", "reason": "lm_data.targets is empty"})
        return
    cfg = view.xelm
    launch.relaunch(cfg, argv, "stages.lm_lapt", "xelm")  # several ranks: this job under torchrun
    train_lm(jobs.lapt_job(cfg, exp, view.targets, lm_dir, P.at(P.CLUSTER, exp)), cfg.lm, lm_dir, load_meta(lm_dir),
             P.at(P.LM_CKPT, exp, job="lapt"), out, threads=cfg.threads)
    record.write(out)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_stage("lm_lapt", VIEW, lambda view, job: _lapt(view, job, args), args)


if __name__ == "__main__":
    main()
