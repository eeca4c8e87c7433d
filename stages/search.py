"""Stage ``search``: LSL's architecture search, every search of the experiment (lsnmt.train.arch_search).

    python -m stages.search --experiment default --log logs/default/search.log

Runs resume from ``work/{exp}/search/{name}/seed{s}``; the weights, the selected architectures and Figure 3
go to ``results/{exp}/search`` (only ``index.json`` when ``experiments.<exp>.search`` is empty), which every
train job declares as an input (LSL-NAS methods read their layout there).
"""

import torch

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner.stage import run
from lsnmt.train.arch_search import run_search


def _search(exp) -> None:
    torch.set_num_threads(exp.train.cpu_threads)  # same weights whatever the core count (TrainConfig.cpu_threads)
    run_search(exp, P.at(P.BIN, exp.name), P.at(P.SEARCH, exp.name), P.at(P.SEARCH_WORK, exp.name))
    record.write(P.at(P.SEARCH, exp.name))


def main(argv: list[str] | None = None) -> None:
    run("search", _search, argv)


if __name__ == "__main__":
    main()
