"""The pipeline's one stage table (:mod:`lsnmt.graph.stages`), the code each stage runs (:mod:`lsnmt.graph.imports`),
and the two front ends made from it: dvc.yaml, generated (:mod:`lsnmt.graph.dvc`), and the Snakefile, which reads
params and code dependencies from it (:mod:`lsnmt.graph.snakemake`); the code's layers and the imports that break
them (:mod:`lsnmt.graph.layers`). Imports neither torch nor the models."""
