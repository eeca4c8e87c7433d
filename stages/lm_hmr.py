"""Stage ``lm_hmr``: hierarchical multi-round training of one new language (x-elm Sec. 4, 6.3; lsnmt.xelm.jobs).

    python -m stages.lm_hmr --experiment default --target he --log logs/default/xelm/lm_hmr/he.log

Branches a new expert from the donor's typology expert and trains it on donor + target text; the existing
experts are only read. ``--target`` is one of params.yaml's ``xelm_targets``.
"""

import sys

from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.stage import run_keyed
from lsnmt.xelm import jobs
from lsnmt.xelm import layout as xl
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm


def _hmr(exp, target: str, argv: list[str]) -> None:
    launch.relaunch(exp.xelm, argv, "stages.lm_hmr", "xelm")  # several ranks: this job under torchrun
    lm_dir = xl.lm_dir(exp.name)
    job = jobs.hmr_job(exp, target, lm_dir, xl.cluster_dir(exp.name))
    train_lm(job, exp.xelm.lm, lm_dir, load_meta(lm_dir), xl.ckpt_dir(exp.name, f"hmr-{target}"),
             xl.hmr_dir(exp.name, target), threads=exp.xelm.threads)
    record.write(xl.hmr_dir(exp.name, target))


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_keyed("lm_hmr", "target", "xelm_targets", lambda exp, target: _hmr(exp, target, args), args)


if __name__ == "__main__":
    main()
