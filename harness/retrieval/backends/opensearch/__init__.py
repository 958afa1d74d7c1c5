"""The OpenSearch backend: the same legs as the embedded one, measured on a real node.

* :mod:`.options`: the ``--opensearch-*`` flags (light: no client library at import);
* :mod:`.client`: one connection, retries with backoff, counted, errors made readable;
* :mod:`.mapping`: analyzers, the index body, the index name, checks of an existing index;
* :mod:`.loading`: the bulk load (fixed order, ``helpers.streaming_bulk``, progress) and seal;
* :mod:`.settling`: refresh, force-merge, refresh, then polls until the index is settled;
* :mod:`.queries`: one request body per leg, the k-NN score turned back into the inner product;
* :mod:`.pipelines`: server-side fusion (neural-search) as search pipelines;
* :mod:`.aggregations`: phrase aggregations and the embedding-model survey;
* :mod:`.backend`: :class:`~.backend.OpenSearchBackend`.

Nothing here imports ``opensearchpy`` at module level except :mod:`.client`, which the
others import only inside functions.
"""
