"""Building and keeping an index: the run and its stages.

- :mod:`.run` — one incremental run (:class:`~.run.Indexer`): walk, parse, store, vectors
- :mod:`.parse` — the parse stage: chunks, symbols and graph facts per file, in workers
- :mod:`.priority` — which files are parsed first (a first build is searchable early)
- :mod:`.static_stage` — the static model's vectors (computed in the run)
- :mod:`.model_stage` — the embedding model's vectors (in the run or in the background)
- :mod:`.background` — the background worker computing the model's vectors
- :mod:`.completeness` — the mark of a run that has not finished (an incomplete index)
- :mod:`.freshness` — re-indexing files changed since the last run before a query
- :mod:`.watch` — following file changes while you edit
- :mod:`.hooks` — git hooks that index after a commit, checkout or merge

Drivers (``watch``, the hooks) take an opened index through :mod:`.protocols`, so
nothing here imports the public door (:mod:`codecite.api`) it serves.
"""
