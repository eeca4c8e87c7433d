# One graph, two front ends: this Snakefile and dvc.yaml declare the same stages with the same
# commands and outputs (tests/test_wiring.py holds them together). Both come from one stage table,
# lsnmt/graph/stages.py: dvc.yaml is generated from it (python -m lsnmt.graph.dvc), and the rules here are made from
# it in one loop (lsnmt/graph/snakemake.py): inputs (a job's own, per method / expert; none from a stage the
# experiment does not define), outputs, log, command, threads, resources, params (the rerun trigger: exactly the
# keys the stage reads) and code inputs (what stages/<name>.py imports). Adding a stage is one table row plus its
# stages/<name>.py; this file names no stage. Every knob lives in params.yaml.
#   snakemake --cores 2                           # the experiment named in params.yaml
#   snakemake --cores 2 --config experiment=iwslt14
#   snakemake --profile slurm                     # on a SLURM cluster (slurm/config.yaml)
#   snakemake --profile slurm --config paper=lmsfd   # every experiment of one paper (params.yaml `papers`)
# Rules state portable needs only (threads; GPU counts: the training rules' from params.yaml, `train` and `xelm`
# sections, one for the other GPU stages); partition, account, GPU model, memory and run time are the profile's (slurm/config.yaml).
# An experiment's job lists (methods, tasks, x-elm experts) are its own (Params.jobs_of), so that any experiment,
# or all of a paper's, runs by name.
# Software: every rule names the project's conda environment (envs/lsnmt.yaml) and container image (envs/lsnmt.sif,
# built from envs/lsnmt.def or envs/Dockerfile; LSNMT_CONTAINER names another, e.g. docker://...), used under
#   snakemake --software-deployment-method conda      (or: apptainer; README "Software environments")
# and ignored otherwise: the rules then run with the Python snakemake runs with (.venv/).

import os
import sys

sys.path.insert(0, workflow.basedir)
from lsnmt.experiment.params import Params  # noqa: E402  (light: no torch)
from lsnmt.graph.snakemake import NAME_WILDCARD, Rules, code, params  # noqa: E402  (the rules, from the stage table)
from lsnmt.graph.stages import STAGES  # noqa: E402
from lsnmt.runner.launch import job_resources  # noqa: E402
from lsnmt.typed import ConfigError, build, load_yaml  # noqa: E402


configfile: "params.yaml"
report: "reports/workflow.rst"

ENV = "envs/lsnmt.yaml"  # every rule's `conda:` (a path relative to this Snakefile)


container: os.environ.get("LSNMT_CONTAINER") or "envs/lsnmt.sif"  # every rule's image (Apptainer)

_FILE = load_yaml("params.yaml")  # refuses a key given twice (Snakemake's own reading keeps the last one)
_CHANGED = sorted(k for k in set(config) | set(_FILE) if k not in ("experiment", "paper")
                  and config.get(k) != _FILE.get(k))
if _CHANGED:
    raise ValueError(f"--config/--configfile changed {_CHANGED}, but the stages read params.yaml: edit params.yaml "
                     "(only `experiment` and `paper` may be given on the command line)")

EXPERIMENTS = config["experiments"]
try:  # typed, for the job lists (the stages check the rest): a name that is not one stops here, in one line
    PARAMS = build(Params, _FILE, "").with_names()
except ConfigError as _exc:
    sys.exit(f"params.yaml: {_exc}")
PAPERS = config.get("papers", {})
if "paper" in config and config["paper"] not in PAPERS:
    raise ValueError(f"paper={config['paper']!r} is not in params.yaml `papers` (known: {', '.join(PAPERS)})")
TARGETS = PAPERS[config["paper"]] if "paper" in config else [config["experiment"]]
for _exp in TARGETS:
    if _exp not in EXPERIMENTS:
        raise ValueError(f"experiment {_exp!r} is not defined in params.yaml (known: {', '.join(EXPERIMENTS)})")
EXP = config["experiment"]


def jobs_of(exp, key):
    """Job list `key` of experiment `exp` (lsnmt.experiment.params.Params.jobs_of): methods, tasks, task_methods,
    xelm_experts, xelm_targets."""
    return list(PARAMS.jobs_of(exp, key))


def train_job(exp, section):
    """The resources of a training job of `exp` (lsnmt.runner.launch.job_resources: GPUs and nodes from params.yaml
    section `section`: `train` for the translation models, `xelm` for the LM training jobs)."""
    return job_resources(getattr(PARAMS.experiments[exp], section))


def tracked(name):
    """Rule params of stage `name`: the params.yaml keys dvc.yaml tracks (lsnmt/graph/stages.py), for the job's
    experiment and method; a change reruns the job (Snakemake's `params` trigger)."""
    return params(name, EXPERIMENTS, jobs_of, EXP)


def output(out):
    """A table output (lsnmt.graph.stages.Out) as Snakemake declares it: a folder, attached to the report."""
    path = directory(out.path) if out.is_dir else out.path
    return report(path, **out.report) if out.report else path


RULES = Rules(EXPERIMENTS, jobs_of, EXP, _FILE["experiment"], TARGETS, train_job)


# every wildcard a name: they reach the shell commands as they are (lsnmt/graph/snakemake.py, NAME_WILDCARD)
wildcard_constraints:
    exp=NAME_WILDCARD,
    method=NAME_WILDCARD,
    expert=NAME_WILDCARD,
    target=NAME_WILDCARD,


rule all:
    input:
        RULES.final(),


for _stage in STAGES:

    rule:
        name:
            _stage.name
        input:
            RULES.inputs(_stage),
            code(_stage.name),
        output:
            *[output(o) for o in _stage.outs],
        params:
            **tracked(_stage.name),
            cmd=RULES.command(_stage),
        log:
            RULES.log(_stage),
        threads: RULES.threads(_stage)
        resources:
            **RULES.resources(_stage),
        localrule: _stage.local
        conda:
            ENV
        shell:
            "{params.cmd}"  # not an expression of _stage: the shell line is evaluated when the job runs
