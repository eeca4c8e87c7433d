"""The GPU check (``scripts/gpu_check.sh``): every step a new GPU node is judged by, run as one timed script.

The pipeline's stages in the stage table's order (:mod:`~lsnmt.gpucheck.order`), the experiment it runs
(:mod:`~lsnmt.gpucheck.plan`, also its sizes and time budgets on a GPU and at tiny size on a CPU), each step a
subprocess under a budget it cannot overrun (:mod:`~lsnmt.gpucheck.steps`), time-boxed trainings
(:mod:`~lsnmt.gpucheck.trainings`, their logs read by :mod:`~lsnmt.gpucheck.trainlog`), sacreBLEU's scores
(:mod:`~lsnmt.gpucheck.scores`) and the one table of figures against targets (:mod:`~lsnmt.gpucheck.report`).
``scripts/gpu_check.py`` puts them in order; ``scripts/gpu_check.sh --cpu`` runs all of it on a CPU at tiny size in
the default test tier, so that the check cannot rot between the rare sessions that have a GPU.
"""
