"""The models' own configs, torch-free: importing them (and loading params.yaml) imports no torch.

``model`` (encoder-decoder Transformer and presets), ``lm`` (x-elm's LM), ``xlmr`` (the task encoder), ``keys``,
one module per language-specific kind (``lms``, ``fd``, ``switch``, ``clsr``, ``clm``, ``adapter``, ``deep``,
``lsl``) and their registry with each kind's traits, ``kinds``. Imports only the leaves of ``lsnmt``
(``typed``, ``io``, ``languages``).
"""
