"""Corpora prepared for an index: loaded corpora as the documents, queries and judgements
an arm reads (:mod:`~harness.retrieval.prepared.prepare`), their column table
(:mod:`~harness.retrieval.prepared.chunk_table`), and the on-disk cache that keeps them between
runs (:mod:`~harness.retrieval.prepared.prepared_cache`, with
:mod:`~harness.retrieval.prepared.columns_format` and
:mod:`~harness.retrieval.prepared.file_digests`)."""
