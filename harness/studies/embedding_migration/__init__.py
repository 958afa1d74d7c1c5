"""Embedding-model migration decisions (docs/migration.md): should an index built with
model OLD keep OLD, bridge NEW's queries into it through an adapter, or be re-indexed?

* :mod:`~harness.retrieval.embeddings.models`: the two models, lazily loaded behind the embedding
  cache, and the derived model kinds (rotated, truncated, repooled, distilled);
* :mod:`~harness.studies.embedding_migration.adapters`: Procrustes, ridge and low-rank maps NEW -> OLD;
* :mod:`~harness.studies.embedding_migration.retention`: exact search, recall@k, paired ratio intervals;
* :mod:`~harness.studies.embedding_migration.decision`:
  :func:`~harness.studies.embedding_migration.decision.decide` and its thresholds (data);
* :mod:`~harness.studies.embedding_migration.study`: one study at T0 and/or T1 as a report document;
* :mod:`~harness.studies.embedding_migration.document`: validation, Markdown, the report directory.

Importing this package loads no model and no heavy library.
"""
