"""Embedding-model migration decisions (docs/migration.md): should an index built with
model OLD keep OLD, bridge NEW's queries into it through an adapter, or be re-indexed?

* :mod:`~harness.migration.models`: the two models, lazily loaded behind the embedding
  cache, and the derived model kinds (rotated, truncated, repooled, distilled);
* :mod:`~harness.migration.adapters`: Procrustes, ridge and low-rank maps NEW -> OLD;
* :mod:`~harness.migration.retention`: exact search, recall@k, paired ratio intervals;
* :mod:`~harness.migration.decision`: :func:`~harness.migration.decision.decide` and its
  thresholds (data);
* :mod:`~harness.migration.study`: one study at T0 and/or T1 as a report document;
* :mod:`~harness.migration.report`: validation, Markdown, the report directory.

Importing this package loads no model and no heavy library.
"""
