"""Stage ``search``: LSL's architecture search, every search of the experiment (lsnmt.train.arch_search).

    python -m stages.search --experiment default --log logs/default/search.log

Reads :class:`lsnmt.train.config.SearchView` only (``data``, ``model``, ``train``, ``search``). Runs resume from
``work/{exp}/search/{name}/seed{s}``; the weights, the selected architectures and Figure 3 go to
``results/{exp}/search`` (only ``index.json`` when ``experiments.<exp>.search`` is empty), which every train job
declares as an input (LSL-NAS methods read their layout there).
"""

import torch

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner.base import Job, run_stage
from lsnmt.train.arch_search import run_search
from lsnmt.train.config import SearchView

VIEW = SearchView


def _search(view: SearchView, job: Job) -> None:
    torch.set_num_threads(view.train.cpu_threads)  # same weights whatever the core count (TrainConfig.cpu_threads)
    exp = job.experiment
    run_search(view, view.search, exp, P.at(P.BIN, exp), P.at(P.SEARCH, exp), P.at(P.SEARCH_WORK, exp))
    record.write(P.at(P.SEARCH, exp))


def main(argv: list[str] | None = None) -> None:
    run_stage("search", VIEW, _search, argv)


if __name__ == "__main__":
    main()
