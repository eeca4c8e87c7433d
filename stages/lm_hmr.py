"""Stage ``lm_hmr``: hierarchical multi-round training of one new language (x-elm Sec. 4, 6.3; lsnmt.xelm.jobs).

    python -m stages.lm_hmr --experiment default --target he --log logs/default/xelm/lm_hmr/he.log

Branches a new expert from the donor's typology expert and trains it on donor + target text; the existing
experts are only read. ``--target`` is one of params.yaml's ``xelm_targets``.
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.stage import run_keyed
from lsnmt.xelm import jobs
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm


def _hmr(exp, target: str, argv: list[str]) -> None:
    launch.relaunch(exp.xelm, argv, "stages.lm_hmr", "xelm")  # several ranks: this job under torchrun
    lm_dir = P.at(P.LM, exp.name)
    job = jobs.hmr_job(exp, target, lm_dir, P.at(P.CLUSTER, exp.name))
    train_lm(job, exp.xelm.lm, lm_dir, load_meta(lm_dir), P.at(P.LM_CKPT, exp.name, job=f"hmr-{target}"),
             P.at(P.HMR, exp.name, target=target), threads=exp.xelm.threads)
    record.write(P.at(P.HMR, exp.name, target=target))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_keyed("lm_hmr", "target", "xelm_targets", lambda exp, target: _hmr(exp, target, args), args)


if __name__ == "__main__":
    main()
