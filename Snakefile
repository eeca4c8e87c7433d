# One graph, two front ends: this Snakefile and dvc.yaml declare the same stages with the same
# commands and outputs (tests/test_wiring.py holds them together). Both come from one stage table,
# lsnmt/graph/table.py: dvc.yaml is generated from it (python -m lsnmt.graph.dvc), and each rule here takes its
# params (the rerun trigger: exactly the keys the stage reads) and its code inputs (what stages/<name>.py imports)
# from it. Every knob lives in params.yaml.
#   snakemake --cores 2                           # the experiment named in params.yaml
#   snakemake --cores 2 --config experiment=iwslt14
#   snakemake --profile slurm                     # on a SLURM cluster (slurm/config.yaml)
#   snakemake --profile slurm --config paper=lmsfd   # every experiment of one paper (params.yaml `papers`)
# Rules state portable needs only (threads; GPU counts: the train rule's from params.yaml, one for the other GPU
# stages); partition, account, GPU model, memory and run time are the profile's (slurm/config.yaml).
# An experiment's job lists (methods, tasks, x-elm experts) are its own (Params.jobs_of), so that any experiment,
# or all of a paper's, runs by name.
# Software: every rule names the project's conda environment (envs/lsnmt.yaml) and container image (envs/lsnmt.sif,
# built from envs/lsnmt.def or envs/Dockerfile; LSNMT_CONTAINER names another, e.g. docker://...), used under
#   snakemake --software-deployment-method conda      (or: apptainer; README "Software environments")
# and ignored otherwise: the rules then run with the Python snakemake runs with (.venv/).

import os
import sys

sys.path.insert(0, workflow.basedir)
from lsnmt.config import Params, TrainConfig  # noqa: E402  (light: no torch)
from lsnmt.graph.snakemake import code, params  # noqa: E402  (the stage table: code inputs, params)
from lsnmt.launch import job_resources  # noqa: E402
from lsnmt.typed import build, load_yaml  # noqa: E402


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
PARAMS = build(Params, _FILE, "params.yaml").with_names()  # typed, for the job lists (the stages check the rest)
PAPERS = config.get("papers", {})
if "paper" in config and config["paper"] not in PAPERS:
    raise ValueError(f"paper={config['paper']!r} is not in params.yaml `papers` (known: {', '.join(PAPERS)})")
TARGETS = PAPERS[config["paper"]] if "paper" in config else [config["experiment"]]
for _exp in TARGETS:
    if _exp not in EXPERIMENTS:
        raise ValueError(f"experiment {_exp!r} is not defined in params.yaml (known: {', '.join(EXPERIMENTS)})")
EXP = config["experiment"]


def jobs_of(exp, key):
    """Job list `key` of experiment `exp` (lsnmt.config.Params.jobs_of): methods, tasks, task_methods,
    xelm_experts, xelm_targets."""
    return list(PARAMS.jobs_of(exp, key))


def methods_of(exp):
    return jobs_of(exp, "methods")


def tracked(name):
    """Rule params of stage `name`: the params.yaml keys dvc.yaml tracks (lsnmt/graph/table.py), for the job's
    experiment and method; a change reruns the job (Snakemake's `params` trigger)."""
    return params(name, EXPERIMENTS, jobs_of, EXP)


def setting(name, key, default):
    return lambda w: EXPERIMENTS[w.exp].get(name, {}).get(key, default)


def train_job(key):
    """One of the train rule's resources (lsnmt.launch.job_resources: GPUs and nodes from params.yaml)."""
    def get(w):
        cfg = build(TrainConfig, EXPERIMENTS[w.exp].get("train", {}), f"experiments.{w.exp}.train")
        return job_resources(cfg).get(key)

    return get


localrules: all, download, params, report, task_eval


wildcard_constraints:
    exp="[^/]+",
    expert="[^/]+",
    target="[^/]+",


def xelm_main_k(exp):
    return EXPERIMENTS[exp]["xelm"]["experts"]["main_k"]


def outputs(exp):
    """What running experiment `exp` produces: translation results where it trains methods, NER / QA results
    where it has tasks, x-elm results where it has an `xelm` section. For the experiment params.yaml selects,
    the task stages run also without tasks (writing empty outputs, as under DVC), so that `dvc commit` finds
    every output of dvc.yaml's graph after a Snakemake run; likewise the small-scale claim (ours only), where it has
    a `claim` section and for the selected experiment."""
    whole = exp == _FILE["experiment"]
    out = []
    if methods_of(exp) and EXPERIMENTS[exp]["data"].get("train_directions", "en-centric") != "none":
        out.append(f"results/{exp}/evaluate")
    if jobs_of(exp, "tasks") or whole:
        out.append(f"results/{exp}/task_eval")
    if EXPERIMENTS[exp].get("xelm"):
        out += [f"results/{exp}/xelm/eval", f"results/{exp}/xelm/icl"]
    if EXPERIMENTS[exp].get("claim") or whole:
        out.append(f"results/{exp}/claim")
    return out


def report_inputs(exp):
    """outputs(exp), plus the search and the prepared data (data-statistics tables) of a translation experiment."""
    out = outputs(exp)
    if f"results/{exp}/evaluate" in out:
        out += [f"results/{exp}/search", f"data/{exp}/prepared"]
    return out


rule all:
    input:
        [out for exp in TARGETS for out in outputs(exp)],
        "reports/params.csv",
        "reports/README.md",


rule download:
    input:
        "embedded/MANIFEST.tsv",
        code("download"),
    output:
        directory("data/{exp}/raw"),
    params:
        **tracked("download"),
    log:
        "logs/{exp}/download.log",
    conda:
        ENV
    shell:
        "python -m stages.download --experiment {wildcards.exp} --log {log}"


rule prepare:
    input:
        "data/{exp}/raw",
        code("prepare"),
    output:
        directory("data/{exp}/prepared"),
    params:
        **tracked("prepare"),
    log:
        "logs/{exp}/prepare.log",
    conda:
        ENV
    shell:
        "python -m stages.prepare --experiment {wildcards.exp} --log {log}"


rule sample:
    input:
        "data/{exp}/prepared",
        "data/{exp}/spm",
        code("sample"),
    output:
        directory("data/{exp}/sampled"),
    params:
        **tracked("sample"),
    log:
        "logs/{exp}/sample.log",
    conda:
        ENV
    shell:
        "python -m stages.sample --experiment {wildcards.exp} --log {log}"


rule spm:
    input:
        "data/{exp}/prepared",
        code("spm"),
    output:
        directory("data/{exp}/spm"),
    params:
        **tracked("spm"),
    log:
        "logs/{exp}/spm.log",
    threads: setting("spm", "threads", 2)
    conda:
        ENV
    shell:
        "python -m stages.spm --experiment {wildcards.exp} --log {log}"


rule encode:
    input:
        "data/{exp}/spm", "data/{exp}/sampled", "data/{exp}/prepared",
        code("encode"),
    output:
        directory("data/{exp}/bin"),
    params:
        **tracked("encode"),
    log:
        "logs/{exp}/encode.log",
    threads: setting("encode", "workers", 2)
    conda:
        ENV
    shell:
        "python -m stages.encode --experiment {wildcards.exp} --log {log}"


rule search:
    input:
        "data/{exp}/bin",
        code("search"),
    output:
        directory("results/{exp}/search"),
    params:
        **tracked("search"),
    log:
        "logs/{exp}/search.log",
    threads: setting("train", "cpu_threads", 2)
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.search --experiment {wildcards.exp} --log {log}"


rule train:
    input:
        "data/{exp}/bin", "results/{exp}/search",
        code("train"),
    output:
        "results/{exp}/train/{method}/model.pt",
        "results/{exp}/train/{method}/curve.tsv",
    params:
        **tracked("train"),
    log:
        "logs/{exp}/train/{method}.log",
    threads: setting("train", "cpu_threads", 2)
    resources:
        gpu=train_job("gpu"),
        nodes=train_job("nodes"),
        mpi=train_job("mpi"),
        tasks=train_job("tasks"),
        tasks_per_gpu=train_job("tasks_per_gpu"),
    conda:
        ENV
    shell:
        "python -m stages.train --experiment {wildcards.exp} --method {wildcards.method} --log {log}"


# One job per trained method, through every route it has: FD and LMS+FD write their other (LS) route into the
# subfolder {method}/{route}, which evaluate scores as the system <method>_<route> (lsnmt/methods.py).
rule translate:
    input:
        "results/{exp}/train/{method}/model.pt", "data/{exp}/spm", "data/{exp}/bin",
        code("translate"),
    output:
        directory("results/{exp}/translate/{method}"),
    params:
        **tracked("translate"),
    log:
        "logs/{exp}/translate/{method}.log",
    threads: setting("decode", "cpu_threads", 2)
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.translate --experiment {wildcards.exp} --method {wildcards.method} --log {log}"


rule evaluate:
    input:
        lambda w: expand("results/{exp}/translate/{method}", exp=w.exp, method=methods_of(w.exp)),
        lambda w: expand("results/{exp}/train/{method}/model.pt", exp=w.exp, method=methods_of(w.exp)),
        "data/{exp}/prepared", "data/{exp}/spm", "data/{exp}/bin",
        code("evaluate"),
    output:
        directory("results/{exp}/evaluate"),
        directory("results/{exp}/metrics/evaluate"),
    params:
        **tracked("evaluate"),
    log:
        "logs/{exp}/evaluate.log",
    threads: setting("evaluate", "cpu_threads", 2)
    conda:
        ENV
    shell:
        "python -m stages.evaluate --experiment {wildcards.exp} --log {log}"


rule task_prep:
    input:
        "data/{exp}/raw",
        code("task_prep"),
    output:
        directory("data/{exp}/tasks"),
    params:
        **tracked("task_prep"),
    log:
        "logs/{exp}/task_prep.log",
    conda:
        ENV
    shell:
        "python -m stages.task_prep --experiment {wildcards.exp} --log {log}"


rule task_train:
    input:
        "data/{exp}/tasks",
        code("task_train"),
    output:
        directory("results/{exp}/tasks"),
    params:
        **tracked("task_train"),
    log:
        "logs/{exp}/task_train.log",
    threads: 2
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.task_train --experiment {wildcards.exp} --log {log}"


rule task_eval:
    input:
        "results/{exp}/tasks", "data/{exp}/tasks",
        code("task_eval"),
    output:
        directory("results/{exp}/task_eval"),
        directory("results/{exp}/metrics/task_eval"),
    params:
        **tracked("task_eval"),
    log:
        "logs/{exp}/task_eval.log",
    conda:
        ENV
    shell:
        "python -m stages.task_eval --experiment {wildcards.exp} --log {log}"


# the papers' #params columns, counted from the experiments reports/paper/counts.yaml links
rule params:
    input:
        "reports/paper",
        code("params"),
    output:
        "reports/params.csv",
    params:
        **tracked("params"),
    log:
        "logs/params.log",
    conda:
        ENV
    shell:
        "python -m stages.params --log {log}"


# ours only: the papers' central claim at small scale (lsnmt/claim/); without a `claim` section: "not configured"
rule claim:
    input:
        code("claim"),
    output:
        directory("results/{exp}/claim"),
    params:
        **tracked("claim"),
    log:
        "logs/{exp}/claim.log",
    threads: setting("claim", "cpu_threads", 1)
    conda:
        ENV
    shell:
        "python -m stages.claim --experiment {wildcards.exp} --log {log}"


rule lm_data:
    input:
        "data/{exp}/prepared", "data/{exp}/spm",
        code("lm_data"),
    output:
        directory("data/{exp}/lm"),
    params:
        **tracked("lm_data"),
    log:
        "logs/{exp}/xelm/lm_data.log",
    conda:
        ENV
    shell:
        "python -m stages.lm_data --experiment {wildcards.exp} --log {log}"


rule cluster:
    input:
        "data/{exp}/lm",
        code("cluster"),
    output:
        directory("results/{exp}/xelm/cluster"),
    params:
        **tracked("cluster"),
    log:
        "logs/{exp}/xelm/cluster.log",
    conda:
        ENV
    shell:
        "python -m stages.cluster --experiment {wildcards.exp} --log {log}"


rule lm_seed:
    input:
        "data/{exp}/lm",
        code("lm_seed"),
    output:
        directory("results/{exp}/xelm/seed"),
    params:
        **tracked("lm_seed"),
    log:
        "logs/{exp}/xelm/lm_seed.log",
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.lm_seed --experiment {wildcards.exp} --log {log}"


rule lm_expert:
    input:
        "data/{exp}/lm", "results/{exp}/xelm/cluster", "results/{exp}/xelm/seed",
        code("lm_expert"),
    output:
        directory("results/{exp}/xelm/experts/{expert}"),
    params:
        **tracked("lm_expert"),
    log:
        "logs/{exp}/xelm/lm_expert/{expert}.log",
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.lm_expert --experiment {wildcards.exp} --expert {wildcards.expert} --log {log}"


rule lm_hmr:
    input:
        "data/{exp}/lm", "results/{exp}/xelm/cluster",
        # the donor's typology expert is one of the main_k ones (which one: cluster/donors.json)
        lambda w: expand("results/{exp}/xelm/experts/typology-k{k}-e{e}", exp=w.exp, k=xelm_main_k(w.exp),
                         e=range(xelm_main_k(w.exp))),
        code("lm_hmr"),
    output:
        directory("results/{exp}/xelm/hmr/{target}"),
    params:
        **tracked("lm_hmr"),
    log:
        "logs/{exp}/xelm/lm_hmr/{target}.log",
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.lm_hmr --experiment {wildcards.exp} --target {wildcards.target} --log {log}"


rule lm_lapt:
    input:
        "data/{exp}/lm", "results/{exp}/xelm/cluster", "results/{exp}/xelm/experts/dense-k1-e0",
        code("lm_lapt"),
    output:
        directory("results/{exp}/xelm/lapt"),
    params:
        **tracked("lm_lapt"),
    log:
        "logs/{exp}/xelm/lm_lapt.log",
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.lm_lapt --experiment {wildcards.exp} --log {log}"


rule lm_eval:
    input:
        "data/{exp}/lm", "results/{exp}/xelm/cluster", "results/{exp}/xelm/seed",
        lambda w: expand("results/{exp}/xelm/experts/{expert}", exp=w.exp, expert=jobs_of(w.exp, "xelm_experts")),
        lambda w: expand("results/{exp}/xelm/hmr/{target}", exp=w.exp, target=jobs_of(w.exp, "xelm_targets")),
        "results/{exp}/xelm/lapt",
        code("lm_eval"),
    output:
        directory("results/{exp}/xelm/eval"),
        directory("results/{exp}/metrics/lm_eval"),
    params:
        **tracked("lm_eval"),
    log:
        "logs/{exp}/xelm/lm_eval.log",
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.lm_eval --experiment {wildcards.exp} --log {log}"


rule lm_icl:
    input:
        "data/{exp}/lm", "results/{exp}/xelm/cluster", "results/{exp}/xelm/seed",
        lambda w: expand("results/{exp}/xelm/experts/{expert}", exp=w.exp, expert=jobs_of(w.exp, "xelm_experts")),
        code("lm_icl"),
    output:
        directory("results/{exp}/xelm/icl"),
        directory("results/{exp}/metrics/lm_icl"),
    params:
        **tracked("lm_icl"),
    log:
        "logs/{exp}/xelm/lm_icl.log",
    resources:
        gpu=1,
    conda:
        ENV
    shell:
        "python -m stages.lm_icl --experiment {wildcards.exp} --log {log}"


rule report:
    input:
        # the run's results (every experiment of a paper with --config paper=P); the stage reads whatever exists
        [out for exp in TARGETS for out in report_inputs(exp)],
        "reports/params.csv", "reports/paper",
        code("report"),
    output:
        report("reports/README.md", category="Index", caption="reports/workflow.rst"),
        "reports/index.html",
        directory("reports/tables"),
        report(directory("reports/figures"), patterns=["{paper}/{name}.png"], category="Figures",
               subcategory="{paper}", labels={"paper": "{paper}", "figure": "{name}"}),
    params:
        **tracked("report"),
    log:
        f"logs/{EXP}/report.log",
    conda:
        ENV
    shell:
        f"python -m stages.report --experiment {EXP} --log {{log}}"
