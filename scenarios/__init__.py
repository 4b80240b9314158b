"""The scenario corpus, shipped as package data: one folder per dialect, ``recordings/`` (captured
streams), ``regressions/`` (shrunk fuzz finds) and ``tools.yaml`` (the tools scenarios name).
Read through :func:`callstream.corpus.scenario.corpus_root`."""
