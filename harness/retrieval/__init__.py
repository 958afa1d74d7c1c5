"""Retrieval arms: backends, embeddings, fusion, rerank, the on-disk caches, and corpora
prepared for an index (:mod:`harness.retrieval.prepared`).  Nothing here scores, certifies
or writes a claim: :mod:`harness.pipeline` runs an arm through all of that."""
