"""Stage ``lm_seed``: the dense seed LM the experts branch from: XGLM's weights (``lm_data.init: xglm``,
lsnmt.xelm.xglm_weights) or one trained here (``scratch``, lsnmt.xelm.trainer).

    python -m stages.lm_seed --experiment default --log logs/default/xelm/lm_seed.log

Resumable state: ``work/{exp}/xelm/ckpt/seed``.
"""

import sys

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.stage import run
from lsnmt.xelm import jobs, xglm_weights
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import train_lm


def _seed(exp, argv: list[str]) -> None:
    out, lm_dir = P.at(P.SEED, exp.name), P.at(P.LM, exp.name)
    if not_configured(exp.name, exp.lm_data, out):
        return
    if exp.lm_data.init == "xglm":  # x-elm Sec. 3.1: XGLM's released weights are the seed
        xglm_weights.write_seed(exp.lm_data.pretrained, exp.xelm.lm, load_meta(lm_dir), out)
    else:
        launch.relaunch(exp.xelm, argv, "stages.lm_seed", "xelm")  # several ranks: this job under torchrun
        train_lm(jobs.seed_job(exp, lm_dir), exp.xelm.lm, lm_dir, load_meta(lm_dir),
                 P.at(P.LM_CKPT, exp.name, job="seed"), out, threads=exp.xelm.threads)
    record.write(out)


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run("lm_seed", lambda exp: _seed(exp, args), args)


if __name__ == "__main__":
    main()
