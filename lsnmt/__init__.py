"""lsnmt: the pipeline's library (config, data, train, decode, eval, report, ...); stages/ runs it."""
