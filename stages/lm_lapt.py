"""Stage ``lm_lapt``: the dense LAPT baseline, continued training of the dense model on all new languages and
their donors (x-elm Sec. 6.3; lsnmt.xelm.jobs).

    python -m stages.lm_lapt --experiment default --log logs/default/xelm/lm_lapt.log
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.io import atomic_dir, write_json
from lsnmt.runner import launch
from lsnmt.runner.stage import run
from lsnmt.xelm import jobs
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm


def _lapt(exp, argv: list[str]) -> None:
    out, lm_dir = P.at(P.LAPT, exp.name), P.at(P.LM, exp.name)
    if not_configured(exp.name, exp.lm_data, out):
        return
    if not exp.lm_data.targets:
        with atomic_dir(out) as tmp:
            write_json(tmp / "status.json", {"status": "not configured", "reason": "lm_data.targets is empty"})
        return
    launch.relaunch(exp.xelm, argv, "stages.lm_lapt", "xelm")  # several ranks: this job under torchrun
    train_lm(jobs.lapt_job(exp, lm_dir, P.at(P.CLUSTER, exp.name)), exp.xelm.lm, lm_dir, load_meta(lm_dir),
             P.at(P.LM_CKPT, exp.name, job="lapt"), out, threads=exp.xelm.threads)
    record.write(out)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run("lm_lapt", lambda exp: _lapt(exp, args), args)


if __name__ == "__main__":
    main()
