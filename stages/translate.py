"""Stage ``translate``: beam search over every direction of every test set (lsnmt.decode.translate), through
every inference route of the method (FD, LMS+FD: the other route into ``results/{exp}/translate/{method}/{route}``);
a test set other than ``test`` goes into a subfolder of its name (``…/{method}/test.tatoeba``).

    python -m stages.translate --experiment default --method naive --log logs/default/translate/naive.log
"""

import torch

from lsnmt import paths as P
from lsnmt.decode.translate import translate_method
from lsnmt.runner.stage import run_method


def _translate(exp, method: str) -> None:
    torch.set_num_threads(exp.decode.cpu_threads)  # whatever the core count (DecodeConfig.cpu_threads)
    name = exp.name
    translate_method(exp, method, P.at(P.MODEL, name, method=method), P.at(P.SPM, name), P.at(P.BIN, name),
                     P.at(P.TRANSLATE, name, method=method))


def main(argv: list[str] | None = None) -> None:
    run_method("translate", _translate, argv)


if __name__ == "__main__":
    main()
