"""Stage ``translate``: beam search over every direction of every test set (lsnmt.decode.translate), through
every inference route of the method (FD, LMS+FD: the other route into ``results/{exp}/translate/{method}/{route}``);
a test set other than ``test`` goes into a subfolder of its name (``…/{method}/test.tatoeba``).

    python -m stages.translate --experiment default --method naive --log logs/default/translate/naive.log

Reads :class:`lsnmt.decode.config.TranslateView` only: ``data``, ``model``, ``decode``, ``train`` and the method's own
entry (``method_cfg.<method>``).
"""

import torch

from lsnmt import paths as P
from lsnmt.decode.config import TranslateView
from lsnmt.decode.translate import translate_method
from lsnmt.runner.base import Each, Job, run_stage
from lsnmt.view import job_list

VIEW = TranslateView
EACH = Each("method", "methods", lambda path, exp, _view: job_list(path, exp, "methods"))


def _translate(view: TranslateView, job: Job) -> None:
    torch.set_num_threads(view.decode.cpu_threads)  # whatever the core count (DecodeConfig.cpu_threads)
    exp, method = job.experiment, str(job.item)
    translate_method(view, exp, method, P.at(P.MODEL, exp, method=method), P.at(P.SPM, exp), P.at(P.BIN, exp),
                     P.at(P.TRANSLATE, exp, method=method))


def main(argv: list[str] | None = None) -> None:
    run_stage("translate", VIEW, _translate, argv, each=EACH)


if __name__ == "__main__":
    main()
