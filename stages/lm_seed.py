"""Stage ``lm_seed``: the dense seed LM the experts branch from: XGLM's weights (``lm_data.init: xglm``,
lsnmt.xelm.xglm_weights) or one trained here (``scratch``, lsnmt.xelm.trainer).

    python -m stages.lm_seed --experiment default --log logs/default/xelm/lm_seed.log

Reads ``lm_data`` and ``xelm`` only (:class:`lsnmt.xelm.config.LMTrainView`). Resumable state:
``work/{exp}/xelm/ckpt/seed``.
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.base import Job, run_stage
from lsnmt.xelm import jobs, xglm_weights
from lsnmt.xelm.config import LMTrainView
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm

VIEW = LMTrainView


def _seed(view: LMTrainView, job: Job, argv: list[str]) -> None:
    exp = job.experiment
    out, lm_dir = P.at(P.SEED, exp), P.at(P.LM, exp)
    if not_configured(exp, view.lm_data, out) or view.lm_data is None or view.xelm is None:
        return
    cfg = view.xelm
    if view.lm_data.init == "xglm":  # x-elm Sec. 3.1: XGLM's released weights are the seed
        xglm_weights.write_seed(view.lm_data.pretrained, cfg.lm, load_meta(lm_dir), out)
    else:
        launch.relaunch(cfg, argv, "stages.lm_seed", "xelm")  # several ranks: this job under torchrun
        train_lm(jobs.seed_job(cfg, lm_dir), cfg.lm, lm_dir, load_meta(lm_dir), P.at(P.LM_CKPT, exp, job="seed"),
                 out, threads=cfg.threads)
    record.write(out)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_stage("lm_seed", VIEW, lambda view, job: _seed(view, job, args), args)


if __name__ == "__main__":
    main()
