"""Stage ``lm_seed``: train the dense seed LM the experts branch from (lsnmt.xelm.trainer).

    python -m stages.lm_seed --experiment default --log logs/default/xelm/lm_seed.log

Resumable state: ``work/{exp}/xelm/ckpt/seed``.
"""

from lsnmt.cli import run
from lsnmt.xelm import jobs
from lsnmt.xelm import layout as xl
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.stage import not_configured
from lsnmt.xelm.trainer import train_lm


def _seed(exp) -> None:  # noqa: ANN001
    out, lm_dir = xl.seed_dir(exp.name), xl.lm_dir(exp.name)
    if not not_configured(exp, out):
        train_lm(jobs.seed_job(exp, lm_dir), exp.xelm.lm, lm_dir, load_meta(lm_dir), xl.ckpt_dir(exp.name, "seed"),
                 out, threads=exp.xelm.threads)


def main(argv: list[str] | None = None) -> None:
    run("lm_seed", _seed, argv)


if __name__ == "__main__":
    main()
