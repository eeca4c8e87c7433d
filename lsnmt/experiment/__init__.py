"""The whole typed params.yaml: every experiment (:class:`~lsnmt.experiment.params.Experiment`) composed of the
sections of the folders below, the loader (:class:`~lsnmt.experiment.params.Params`), its JSON Schema for editors and
the entry of the stages that read the whole file (:mod:`lsnmt.experiment.stage`)."""
