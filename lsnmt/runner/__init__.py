"""Running stages: the stage runner, the multi-rank launcher, job locks, console lines."""
