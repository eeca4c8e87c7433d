# One graph, two front ends: this Snakefile and dvc.yaml declare the same stages with the same
# commands and outputs (tests/test_wiring.py holds them together). Every knob lives in params.yaml.
#   snakemake --cores 2                           # the experiment named in params.yaml
#   snakemake --cores 2 --config experiment=iwslt14
#   snakemake --profile slurm                     # on a SLURM cluster (slurm/config.yaml)
#   snakemake --profile slurm --config paper=lmsfd   # every experiment of one paper (params.yaml `papers`)
# Rules state portable needs only (threads; the train rule's GPU and node counts from params.yaml);
# partition, account, GPU model, memory and run time are the profile's (slurm/config.yaml).

import sys
from glob import glob

import yaml

sys.path.insert(0, workflow.basedir)
from lsnmt.config import TrainConfig  # noqa: E402  (light: no torch)
from lsnmt.launch import job_resources  # noqa: E402
from lsnmt.typed import build  # noqa: E402


configfile: "params.yaml"

with open("params.yaml", encoding="utf-8") as fh:
    _FILE = yaml.safe_load(fh)
_CHANGED = sorted(k for k in set(config) | set(_FILE) if k not in ("experiment", "paper")
                  and config.get(k) != _FILE.get(k))
if _CHANGED:
    raise ValueError(f"--config/--configfile changed {_CHANGED}, but the stages read params.yaml: edit params.yaml "
                     "(only `experiment` and `paper` may be given on the command line)")

EXPERIMENTS = config["experiments"]
PAPERS = config.get("papers", {})
if "paper" in config and config["paper"] not in PAPERS:
    raise ValueError(f"paper={config['paper']!r} is not in params.yaml `papers` (known: {', '.join(PAPERS)})")
TARGETS = PAPERS[config["paper"]] if "paper" in config else [config["experiment"]]
for _exp in TARGETS:
    if _exp not in EXPERIMENTS:
        raise ValueError(f"experiment {_exp!r} is not defined in params.yaml (known: {', '.join(EXPERIMENTS)})")
EXP = config["experiment"]


def methods_of(exp):
    """The methods `exp` runs (lsnmt.config.Params.methods_of): its own `methods`, else the top-level list."""
    own = EXPERIMENTS[exp].get("methods")
    return config["methods"] if own is None else own


METHODS = methods_of(EXP)
DATA_CODE = ["lsnmt/config.py", "lsnmt/typed.py", "lsnmt/io.py", "lsnmt/languages.py", "lsnmt/cli.py"]
MODEL_CODE = sorted(glob("models/**/*.py", recursive=True))
TRAIN_CODE = sorted(glob("lsnmt/train/*.py"))
DECODE_CODE = sorted(glob("lsnmt/decode/*.py"))
EVAL_CODE = sorted(glob("lsnmt/eval/*.py"))


def section(name):
    return lambda w: EXPERIMENTS[w.exp].get(name, {})


def setting(name, key, default):
    return lambda w: EXPERIMENTS[w.exp].get(name, {}).get(key, default)


def train_job(key):
    """One of the train rule's resources (lsnmt.launch.job_resources: GPUs and nodes from params.yaml)."""
    def get(w):
        cfg = build(TrainConfig, EXPERIMENTS[w.exp].get("train", {}), f"experiments.{w.exp}.train")
        return job_resources(cfg).get(key)

    return get


localrules: all, download, params


rule all:
    input:
        expand("results/{exp}/evaluate", exp=TARGETS),
        "reports/params.csv",


rule download:
    input:
        "stages/download.py", "lsnmt/data/download.py", "lsnmt/data/fetch.py", sorted(glob("lsnmt/data/sources/*.py")),
        "embedded/MANIFEST.tsv", DATA_CODE,
    output:
        directory("data/{exp}/raw"),
    params:
        data=section("data"), download=section("download"),
    log:
        "logs/{exp}/download.log",
    shell:
        "python -m stages.download --experiment {wildcards.exp} --log {log}"


rule prepare:
    input:
        "data/{exp}/raw", "stages/prepare.py", "lsnmt/data/prepare.py", "lsnmt/data/tags.py", DATA_CODE,
    output:
        directory("data/{exp}/prepared"),
    params:
        data=section("data"), prepare=section("prepare"),
    log:
        "logs/{exp}/prepare.log",
    shell:
        "python -m stages.prepare --experiment {wildcards.exp} --log {log}"


rule sample:
    input:
        "data/{exp}/prepared", "stages/sample.py", "lsnmt/data/sample.py", DATA_CODE,
    output:
        directory("data/{exp}/sampled"),
    params:
        sample=section("sample"),
    log:
        "logs/{exp}/sample.log",
    shell:
        "python -m stages.sample --experiment {wildcards.exp} --log {log}"


rule spm:
    input:
        "data/{exp}/prepared", "stages/spm.py", "lsnmt/data/spm.py", "lsnmt/data/tags.py", DATA_CODE,
    output:
        directory("data/{exp}/spm"),
    params:
        spm=section("spm"),
    log:
        "logs/{exp}/spm.log",
    threads: setting("spm", "threads", 2)
    shell:
        "python -m stages.spm --experiment {wildcards.exp} --log {log}"


rule encode:
    input:
        "data/{exp}/spm", "data/{exp}/sampled", "data/{exp}/prepared", "stages/encode.py", "lsnmt/data/encode.py",
        "lsnmt/data/shards.py", DATA_CODE,
    output:
        directory("data/{exp}/bin"),
    params:
        encode=section("encode"),
    log:
        "logs/{exp}/encode.log",
    threads: setting("encode", "workers", 2)
    shell:
        "python -m stages.encode --experiment {wildcards.exp} --log {log}"


rule train:
    input:
        "data/{exp}/bin", "stages/train.py", "lsnmt/launch.py", TRAIN_CODE, MODEL_CODE, DATA_CODE,
    output:
        "results/{exp}/train/{method}/model.pt",
        "results/{exp}/train/{method}/curve.tsv",
    params:
        model=section("model"), train=section("train"),
    log:
        "logs/{exp}/train/{method}.log",
    threads: 2
    resources:
        gpu=train_job("gpu"),
        nodes=train_job("nodes"),
        mpi=train_job("mpi"),
        tasks=train_job("tasks"),
        tasks_per_gpu=train_job("tasks_per_gpu"),
    shell:
        "python -m stages.train --experiment {wildcards.exp} --method {wildcards.method} --log {log}"


rule translate:
    input:
        "results/{exp}/train/{method}/model.pt", "data/{exp}/spm", "data/{exp}/bin", "stages/translate.py",
        DECODE_CODE, MODEL_CODE, DATA_CODE,
    output:
        directory("results/{exp}/translate/{method}"),
    params:
        decode=section("decode"),
    log:
        "logs/{exp}/translate/{method}.log",
    threads: 2
    shell:
        "python -m stages.translate --experiment {wildcards.exp} --method {wildcards.method} --log {log}"


rule evaluate:
    input:
        lambda w: expand("results/{exp}/translate/{method}", exp=w.exp, method=methods_of(w.exp)),
        lambda w: expand("results/{exp}/train/{method}/model.pt", exp=w.exp, method=methods_of(w.exp)),
        "data/{exp}/prepared", "data/{exp}/spm", "data/{exp}/bin", "stages/evaluate.py", EVAL_CODE, DATA_CODE,
    output:
        directory("results/{exp}/evaluate"),
    params:
        evaluate=section("evaluate"), methods=lambda w: methods_of(w.exp),
    log:
        "logs/{exp}/evaluate.log",
    threads: 2
    shell:
        "python -m stages.evaluate --experiment {wildcards.exp} --log {log}"


rule params:
    input:
        "stages/params.py", "lsnmt/accounting.py", MODEL_CODE,
    output:
        "reports/params.csv",
    log:
        "logs/params.log",
    shell:
        "python -m stages.params --log {log}"
