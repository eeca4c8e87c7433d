"""The models: the Transformer, the language-specific modules (``ls/``) and their torch-free configs (``config/``)."""
