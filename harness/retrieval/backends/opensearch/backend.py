"""The ``opensearch`` backend: the harness's legs measured on an OpenSearch node.

One run: check the server (OpenSearch 2.x with the k-NN plugin for a dense leg), name the
index after the corpus and its shape (:mod:`.mapping`), reuse it when this product loaded
and sealed it, else create and load it (:mod:`.loading`); merge and settle it
(:mod:`.settling`); refuse it when anything wrote to it after it was sealed; then answer
legs (:mod:`.queries`), one ``_msearch`` per batch.  Fusion, rerank and scoring stay in
the harness, so every arm of the embedded backend runs unchanged; ``fusion="server"`` adds
the node's own hybrid fusion as a separate arm (:mod:`.pipelines`).  :meth:`end_measurement`
refuses the result when the index changed during retrieval.

BM25 is Lucene's (``k1``, ``b`` set as the index's similarity); the dense leg returns raw
inner products, like the embedded backend.  What differs is listed in docs/opensearch.md.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Sequence

import numpy as np

from harness.retrieval.backends.base import (
    Backend,
    BackendError,
    Candidates,
    EmbeddingSurvey,
    IndexDoc,
    SearchQuery,
    QueryEncoding,
    check_leg,
    ordered_for_index,
)
from harness.retrieval.backends.opensearch import mapping, queries
from harness.retrieval.backends.opensearch.client import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    Node,
)
from harness.retrieval.backends.opensearch.options import (
    DEFAULT_EF_SEARCH,
    DEFAULT_SETTLE_TIMEOUT,
    DENSE_MODES,
    FUSION_SITES,
)

log = logging.getLogger(__name__)

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


def has_plugin(plugins: dict, word: str) -> bool:
    """A plugin's presence by a word of its name (``knn``, ``neural``): distributions name
    components ``opensearch-knn``, classpath nodes by class."""
    return any(word in (name or "").lower() for name in plugins)


class OpenSearchBackend(QueryEncoding, Backend):
    """Legs on an OpenSearch node at ``url`` (module docstring)."""

    name = "opensearch"

    def __init__(self, *, url: str, k1: float = DEFAULT_K1, b: float = DEFAULT_B,
                 encoder=None, progress: bool = True, dense_search: str = "hnsw",
                 ef_search: int = DEFAULT_EF_SEARCH, fusion: str = "harness",
                 analyzer: str = mapping.DEFAULT_ANALYZER,
                 index_prefix: str = mapping.DEFAULT_PREFIX, rebuild: bool = False,
                 timeout: float = DEFAULT_TIMEOUT, retries: int = DEFAULT_RETRIES,
                 settle_timeout: float = DEFAULT_SETTLE_TIMEOUT, settle_poll: float = 0.5,
                 m: int = mapping.HNSW_M, ef_construction: int = mapping.EF_CONSTRUCTION,
                 vector_layout: str | None = None,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        if not (k1 >= 0) or not (0 <= b <= 1):
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        if dense_search not in DENSE_MODES:
            raise ValueError(f"unknown --opensearch-dense {dense_search!r}; expected one of "
                             f"{sorted(DENSE_MODES)}")
        if fusion not in FUSION_SITES:
            raise ValueError(f"unknown --opensearch-fusion {fusion!r}; expected one of "
                             f"{sorted(FUSION_SITES)}")
        if analyzer not in mapping.ANALYZERS:
            raise ValueError(f"unknown --opensearch-analyzer {analyzer!r}; expected one of "
                             f"{sorted(mapping.ANALYZERS)}")
        if vector_layout is None:  # the node must score every document to fuse them
            vector_layout = "every-document" if fusion == "server" else "distinct"
        if vector_layout not in mapping.VECTOR_LAYOUTS:
            raise ValueError(f"unknown vector layout {vector_layout!r}; expected one of "
                             f"{sorted(mapping.VECTOR_LAYOUTS)}")
        if fusion == "server" and vector_layout != "every-document":
            raise ValueError("server-side fusion needs a vector on every document "
                             "(vector layout every-document)")
        self.vector_layout = vector_layout
        self.k1, self.b = float(k1), float(b)
        self.encoder = encoder
        self.progress = progress
        self.dense_search = dense_search
        self.ef_search = int(ef_search)
        self.fusion = fusion
        self.analyzer = analyzer
        self.prefix = mapping.check_prefix(index_prefix)
        self.rebuild = bool(rebuild)
        self.settle_timeout = float(settle_timeout)
        self.settle_poll = float(settle_poll)
        self.m, self.ef_construction = int(m), int(ef_construction)
        self.node = Node(url, timeout=timeout, retries=retries, pool=16,
                         max_response_bytes=max_response_bytes)
        self.legs: tuple[str, ...] = ()
        self.index_name: str | None = None
        self.documents = 0
        self.dimension: int | None = None
        self.server: dict | None = None
        self.meta: dict | None = None
        self.before: dict | None = None
        self.after: dict | None = None
        self._loaded: dict | None = None
        self._settle_polls = 0
        self._phase_seconds: dict[str, float] = {}
        self._init_query_vectors()
        self._pipeline: str | None = None
        self._pipeline_lock = threading.Lock()
        self._fused_arm: str | None = None
        self._doc_file: dict[str, str] = {}
        self.vectors_held: int | None = None

    # ------------------------------------------------------------------ indexing

    def _labels_for(self, docs: Sequence[IndexDoc]) -> list[str | None]:
        """The model label each document records (every document: the encoder's)."""
        return [self.encoder.label] * len(docs)

    def index(self, docs: Sequence[IndexDoc], legs: Sequence[str]) -> None:
        from harness.retrieval.backends.opensearch import loading, settling

        ordered, self.legs = ordered_for_index(docs, legs)
        dense = "dense" in self.legs
        if dense and self.encoder is None:
            raise ValueError("the dense leg needs an embedding encoder")
        self.server = self.node.server()
        if dense and not has_plugin(self.server["plugins"], "knn"):
            raise BackendError(f"OpenSearch at {self.node.url} has no k-NN plugin; the dense "
                               "leg needs it (opensearch-knn, Lucene engine)")
        if self.fusion == "server" and not has_plugin(self.server["plugins"], "neural"):
            raise BackendError(f"OpenSearch at {self.node.url} has no neural-search plugin; "
                               "server-side fusion needs it (use --opensearch-fusion harness)")
        vectors_shape = None
        if dense:
            self.dimension = int(self.encoder.dimension)
            vectors_shape = {"model": self.encoder.label, "dimension": self.dimension,
                             "layout": self.vector_layout,
                             "space_type": mapping.SPACE_TYPE, "engine": mapping.ENGINE,
                             "m": self.m, "ef_construction": self.ef_construction}
        shape = mapping.shape(self.analyzer, self.k1, self.b, vectors_shape)
        digest = mapping.documents_digest(ordered)
        name = self.index_name = mapping.index_name(self.prefix, shape, digest)
        self.documents = len(ordered)
        self._doc_file = {d.doc_id: d.file_id for d in ordered}
        expected: dict[str, int] = {}
        for d in ordered:
            expected[d.file_id] = expected.get(d.file_id, 0) + 1

        indices = self.node.client.indices
        exists = self.node.call(f"looking up index {name}", indices.exists, index=name)
        if exists:
            found = self.node.call(f"reading the mapping of {name}", indices.get_mapping,
                                   index=name)[name]["mappings"]
            ours = (found.get("_meta") or {}).get("product") == mapping.PRODUCT
            if self.rebuild and ours:
                log.warning("--opensearch-rebuild: deleting index %s to reload it", name)
                self.node.call(f"deleting index {name}", indices.delete, index=name)
                exists = False
            else:
                self.meta = mapping.check_existing(name, found, shape, digest)
        if not exists:
            load_id = uuid.uuid4().hex
            meta = mapping.meta(shape, digest, load_id, len(ordered), len(expected))
            body = mapping.index_body(self.analyzer, self.k1, self.b, self.dimension, meta,
                                      self.m, self.ef_construction)
            vectors = None
            if dense:
                tick = time.perf_counter()
                vectors = np.asarray(self.encoder.encode_documents(
                    [d.embedded_text for d in ordered]), dtype=np.float32)
                self._phase_seconds["embed_seconds"] = time.perf_counter() - tick
            labels = self._labels_for(ordered) if dense else None
            self._loaded = loading.load(self.node, name, body, len(ordered),
                                        self._sources(ordered, vectors, labels, load_id),
                                        self.progress)
            tick = time.perf_counter()
            try:
                settling.merge(self.node, name)
            except BaseException as exc:
                loading._drop(self.node, name, exc)
                raise
            self._phase_seconds["merge_seconds"] = time.perf_counter() - tick
            self.meta = loading.seal(self.node, name, meta)
            self._check_live(name)
        else:
            self._check_live(name)  # before anything (a refresh, a merge) touches it
            tick = time.perf_counter()
            settling.merge(self.node, name)
            self._phase_seconds["merge_seconds"] = time.perf_counter() - tick
        tick = time.perf_counter()
        self._settle_polls = settling.await_settled(
            self.node, name, expected, self.meta["load_id"], poll_seconds=self.settle_poll,
            timeout=self.settle_timeout)
        self._phase_seconds["settle_seconds"] = time.perf_counter() - tick
        before = settling.stats(self.node, name)
        sealed = self.meta["sealed_seq_no"]
        if before["max_seq_no"] != sealed:
            raise BackendError(
                f"refusing index {name!r}: it was written after this product loaded and "
                f"sealed it (max_seq_no {before['max_seq_no']}, sealed at {sealed}): "
                f"{before['max_seq_no'] - sealed} writes since; rerun with "
                "--opensearch-rebuild to reload it")
        self.before = before
        if dense:
            self.vectors_held = int(self.node.call(
                f"counting the vectors of {name}", self.node.client.count, index=name,
                body={"query": {"exists": {"field": mapping.VECTOR}}})["count"])

    def _check_live(self, name: str) -> None:
        """The index's live state, settings and mappings against what this run builds with
        and records (:func:`mapping.check_live`), before anything is measured."""
        indices = self.node.client.indices
        state = self.node.call(f"reading the state of {name}", self.node.client.cluster.state,
                               metric="metadata", index=name)
        state = ((state.get("metadata") or {}).get("indices") or {}).get(name, {}).get("state")
        if state == "close":
            state = "closed"
        settings = self.node.call(f"reading the settings of {name}", indices.get_settings,
                                  index=name)[name]["settings"]["index"]
        found = self.node.call(f"reading the mapping of {name}", indices.get_mapping,
                               index=name)[name]["mappings"]
        expected = mapping.index_body(self.analyzer, self.k1, self.b, self.dimension, {},
                                      self.m, self.ef_construction)
        mapping.check_live(name, settings, found, expected, state)

    def _sources(self, ordered, vectors, labels, load_id):
        """``(doc_id, _source)`` in index order; with the ``distinct`` layout each group of
        byte-identical vectors is held by its first document (:mod:`.mapping`)."""
        if vectors is None:
            for d in ordered:
                yield d.doc_id, mapping.doc_source(d, load_id, None)
            return
        if self.vector_layout == "distinct":
            holder = mapping.vector_groups(vectors)
        else:
            holder = list(range(len(ordered)))
        members: dict[int, list[int]] = {}
        for i, h in enumerate(holder):
            if h != i:
                members.setdefault(h, []).append(i)
        for i, d in enumerate(ordered):
            if holder[i] != i:
                yield d.doc_id, mapping.doc_source(d, load_id, labels[i], embedded=True)
                continue
            group = members.get(i, [])
            yield d.doc_id, mapping.doc_source(
                d, load_id, labels[i], vectors[i].tolist(), embedded=True,
                members=[ordered[j].doc_id for j in group],
                member_files=[ordered[j].file_id for j in group])

    # ------------------------------------------------------------------ search

    def _vector(self, text: str) -> np.ndarray:
        return self.query_vector(text)

    def _dense_query(self, q: SearchQuery, k: int) -> dict:
        vector = self._vector(q.text)
        if self.dense_search == "exact":
            return queries.exact_query(vector, q.files)
        return queries.knn_query(vector, k, self.ef_search, q.files)

    def _leg_body(self, leg: str, q: SearchQuery, k: int) -> dict:
        if leg == "bm25":
            return queries.body(queries.bm25_query(q.text, q.files), k)
        return queries.body(self._dense_query(q, k), k, members=True)

    def _dense_hits(self, response: dict, q: SearchQuery, k: int) -> list[tuple[str, float]]:
        if q.files is None:
            return queries.expanded_hits(response, k)
        files = set(q.files)
        return queries.expanded_hits(response, k, lambda d: self._doc_file.get(d) in files)

    def _check(self, legs: Sequence[str], k: int) -> None:
        for leg in legs:
            check_leg(leg)
            if leg not in self.legs:
                raise ValueError(f"leg {leg!r} was not indexed (indexed: {list(self.legs)})")
        if k < 1:
            raise ValueError(f"k must be positive, got {k}")

    def search(self, leg: str, queries_: Sequence[SearchQuery], k: int) -> Candidates:
        return self.search_legs([leg], queries_, k)[leg]

    def search_legs(self, legs: Sequence[str], queries_: Sequence[SearchQuery],
                    k: int) -> dict[str, Candidates]:
        """Every (leg, query) of the batch in one ``_msearch``."""
        self._check(legs, k)
        out: dict[str, Candidates] = {leg: {} for leg in legs}
        if not queries_:
            return out
        lines, slots = [], []
        for leg in legs:
            for q in queries_:
                lines += [{"index": self.index_name}, self._leg_body(leg, q, k)]
                slots.append((leg, q))
        responses = self._msearch(lines, f"searching {'+'.join(legs)} for {len(queries_)} "
                                         "queries")
        scale = 1.0 / (self.k1 + 1.0)
        for (leg, q), response in zip(slots, responses):
            out[leg][q.query_id] = (self._dense_hits(response, q, k) if leg == "dense"
                                    else queries.hits(response, scale=scale))
        return out

    def _msearch(self, lines: list, what: str) -> list[dict]:
        from opensearchpy.exceptions import TransportError

        client = self.node.client

        def send():
            responses = client.msearch(body=lines)["responses"]
            for item in responses:  # an item's error is inside an HTTP 200
                if "error" in item:
                    error = item["error"]
                    raise TransportError(item.get("status", 500),
                                         error.get("type") if isinstance(error, dict) else error,
                                         {"error": error})
            return responses

        responses = self.node.call(what, send)
        if len(responses) != len(lines) // 2:
            raise BackendError(f"OpenSearch at {self.node.url} answered {len(responses)} of "
                               f"{len(lines) // 2} searches")
        return responses

    def fused_search(self, queries_: Sequence[SearchQuery], spec, size: int) -> Candidates | None:
        """Server-side fusion (``fusion="server"``): one ``hybrid`` query per query through
        the arm's search pipeline; the fused list re-sorted in the harness's total order
        and cut to ``size``.  None (the harness fuses) otherwise."""
        if self.fusion != "server":
            return None
        from harness.retrieval.arms import fusion_window

        self._check(("bm25", "dense"), size)
        pipeline = self._ensure_pipeline(spec)
        window = fusion_window(size)
        out: Candidates = {}
        for q in queries_:
            body = queries.hybrid_body(queries.bm25_query(q.text, q.files),
                                       self._dense_query(q, window), window)
            response = self.node.search(f"hybrid search through pipeline {pipeline}",
                                        self.index_name, body, search_pipeline=pipeline)
            out[q.query_id] = queries.hits(response)[:size]
        return out

    def _ensure_pipeline(self, spec) -> str:
        from harness.retrieval.backends.opensearch.pipelines import pipeline_body, pipeline_id

        pid = pipeline_id(spec)
        with self._pipeline_lock:
            if self._pipeline != pid:
                self.node.call(f"writing search pipeline {pid}", self.node.client.transport.perform_request,
                               "PUT", f"/_search/pipeline/{pid}",
                               body=pipeline_body(spec, self.server["version"]))
                self._pipeline = pid
                self._fused_arm = f"{spec.arm_id}-server"
        return pid

    def end_measurement(self) -> None:
        from harness.retrieval.backends.opensearch.settling import stats

        if self.index_name is None or self.before is None:
            return
        after = stats(self.node, self.index_name)
        self.after = after
        moved = [f"{key} {self.before[key]} -> {after[key]}" for key in
                 ("indexing_total", "max_seq_no", "docs_count", "docs_deleted", "segments")
                 if self.before[key] != after[key]]
        if moved:
            raise BackendError(
                f"refusing to write a result: index {self.index_name!r} changed during the "
                f"measurement ({', '.join(moved)}); something wrote to it while it was being "
                "measured, so the rankings may come from different indexes")

    # ------------------------------------------------------------------ provenance

    def embedding_survey(self) -> EmbeddingSurvey:
        from harness.retrieval.backends.opensearch.aggregations import BucketLimit, model_survey

        if "dense" not in self.legs:
            return EmbeddingSurvey({}, None)
        try:
            counts = model_survey(self.node, self.index_name)
        except BucketLimit as exc:
            raise BackendError(str(exc)) from None
        found = self.node.call(f"reading the mapping of {self.index_name}",
                               self.node.client.indices.get_mapping,
                               index=self.index_name)[self.index_name]["mappings"]
        field = mapping.knn_fields(found.get("properties", {})).get(mapping.VECTOR, {})
        dimension = field.get("dimension")
        return EmbeddingSurvey(counts, None if dimension is None else int(dimension))

    def describe(self) -> dict:
        server = self.server or {}
        block = {
            "name": self.name,
            "legs": list(self.legs),
            "documents": self.documents,
            "server": {"distribution": server.get("distribution"),
                       "version": server.get("version"),
                       "lucene_version": server.get("lucene_version"),
                       "plugins": server.get("plugins")},
            "index": {
                "name": self.index_name,
                "mapping_version": mapping.MAPPING_VERSION,
                "shards": 1, "replicas": 0,
                "sort": list(mapping.SORT_FIELDS),
                "settled": "refresh, force-merge to 1 segment, refresh; every expected file "
                           "has its chunks, (files, chunks) equal on two consecutive polls, "
                           "every document from the index's own load",
                "before_measurement": self.before,
                "after_measurement": self.after,
            },
        }
        if "bm25" in self.legs:
            block["bm25"] = {
                "implementation": f"Lucene LegacyBM25Similarity (Lucene "
                                  f"{server.get('lucene_version')}), scores divided by k1 + 1",
                "variant": "lucene",
                "k1": self.k1,
                "b": self.b,
                "analyzer": self.analyzer,
                "analyzer_description": mapping.ANALYZER_DESCRIPTIONS[self.analyzer],
                "document_length": "Lucene's one-byte norm (exact up to 39 tokens, then "
                                   "rounded); documents with no token are not counted in N "
                                   "or the average length",
            }
        if "dense" in self.legs:
            block["dense"] = {
                "search": ("hnsw (Lucene k-NN, approximate)" if self.dense_search == "hnsw"
                           else "exact (k-NN knn_score script over every document)"),
                "mode": self.dense_search,
                "engine": mapping.ENGINE, "space_type": mapping.SPACE_TYPE,
                "m": self.m, "ef_construction": self.ef_construction,
                "ef_search": self.ef_search if self.dense_search == "hnsw" else None,
                "layout": self.vector_layout,
                "vectors_held": self.vectors_held,
                "score": "raw inner product, recovered from the k-NN score "
                         "(ip + 1 when ip >= 0, 1 / (1 - ip) otherwise)",
            }
        if self._fused_arm is not None:
            block["fusion"] = {"computed_by": "server", "pipeline_id": self._pipeline,
                               "arm_id": self._fused_arm}
        return block

    def run_stats(self) -> dict:
        stats = getattr(self.encoder, "stats", None)
        out = {"opensearch": {
            "url": self.node.url,
            "index": self.index_name,
            "loaded_by_this_run": self._loaded is not None,
            "load": self._loaded,
            "settle_polls": self._settle_polls,
            "phases": dict(self._phase_seconds),
            "requests": self.node.counts(),
        }}
        if stats is not None:
            out["embedding"] = stats.block()
        return out

    def close(self) -> None:
        try:
            self.node.client.close()
        except Exception:  # closing a pool of dead connections is not worth an error
            log.debug("closing the OpenSearch client failed", exc_info=True)
