"""Stage ``lm_hmr``: hierarchical multi-round training of one new language (x-elm Sec. 4, 6.3; lsnmt.xelm.jobs).

    python -m stages.lm_hmr --experiment default --target he --log logs/default/xelm/lm_hmr/he.log

Branches a new expert from the donor's typology expert and trains it on donor + target text; the existing
experts are only read. ``--target`` is one of params.yaml's ``xelm_targets`` (``lm_data.targets``). Reads
``lm_data`` and ``xelm`` only (:class:`lsnmt.xelm.config.LMTrainView`).
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.base import Each, Job, run_stage
from lsnmt.xelm import jobs
from lsnmt.xelm.config import LMTrainView
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm

VIEW = LMTrainView
EACH = Each("target", "xelm_targets", lambda _path, _exp, view: view.targets)


def _hmr(view: LMTrainView, job: Job, argv: list[str]) -> None:
    exp, target, cfg = job.experiment, str(job.item), view.xelm
    assert cfg is not None  # EACH: an experiment without xelm has no target
    launch.relaunch(cfg, argv, "stages.lm_hmr", "xelm")  # several ranks: this job under torchrun
    lm_dir = P.at(P.LM, exp)
    train = jobs.hmr_job(cfg, exp, view.targets, target, lm_dir, P.at(P.CLUSTER, exp))
    train_lm(train, cfg.lm, lm_dir, load_meta(lm_dir), P.at(P.LM_CKPT, exp, job=f"hmr-{target}"),
             P.at(P.HMR, exp, target=target), threads=cfg.threads)
    record.write(P.at(P.HMR, exp, target=target))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_stage("lm_hmr", VIEW, lambda view, job: _hmr(view, job, args), args, each=EACH)


if __name__ == "__main__":
    main()
