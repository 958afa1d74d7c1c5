"""OpenSearch backends that do one real thing to the real node at a chosen moment: the
faults and the index states the refusal paths need.  Each is registered in place of the
``opensearch`` backend by a test (``monkeypatch.setitem(BACKENDS, "opensearch", ...)``), so
the ``--opensearch-*`` flags reach it unchanged."""

from __future__ import annotations

import urllib.request

from harness.retrieval.backends.opensearch.backend import OpenSearchBackend

OTHER_MODEL = "other/embedding-model@000000000000"

#: what a fault backend does after the first batch was searched; set by the test
AFTER_FIRST_BATCH: dict[str, object] = {}


def _http(url: str, method: str, path: str, body: bytes | None = None) -> int:
    request = urllib.request.Request(url + path, data=body, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


class FaultAfterFirstBatch(OpenSearchBackend):
    """Searches like the real backend, then runs ``AFTER_FIRST_BATCH["fault"](self)`` once."""

    def search_legs(self, legs, queries, k):
        out = super().search_legs(legs, queries, k)
        fault = AFTER_FIRST_BATCH.pop("fault", None)
        if fault is not None:
            fault(self)
        return out


def delete_the_index(backend) -> None:
    _http(backend.node.url, "DELETE", f"/{backend.index_name}")


def overwrite_one_document(backend) -> None:
    """Re-index the first document as it is (an update: indexing.total and max_seq_no move)."""
    doc_id = sorted(backend._doc_file)[0]
    source = backend.node.client.get(index=backend.index_name, id=doc_id)["_source"]
    backend.node.client.index(index=backend.index_name, id=doc_id, body=source)


class LabelledBackend(OpenSearchBackend):
    """Records, for the documents of the first file, ``FIRST_FILE_LABEL`` (None: no label)
    instead of the encoder's: an index re-embedded halfway through a model change, or
    written by a loader that did not say which model it used.  Its indexes get their own
    prefix, so no normal run reads them."""

    FIRST_FILE_LABEL: str | None = OTHER_MODEL
    EVERY_LABEL: bool = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.prefix = f"labelled-{'all' if self.EVERY_LABEL else 'first'}-" \
                      f"{(self.FIRST_FILE_LABEL or 'none').split('/')[0].lower()}"

    def _labels_for(self, docs):
        first = min(d.file_id for d in docs)
        label = self.encoder.label
        return [self.FIRST_FILE_LABEL if (self.EVERY_LABEL or d.file_id == first) else label
                for d in docs]


class MixedBackend(LabelledBackend):
    FIRST_FILE_LABEL = OTHER_MODEL


class PartlySilentBackend(LabelledBackend):
    FIRST_FILE_LABEL = None


class SilentBackend(LabelledBackend):
    FIRST_FILE_LABEL = None
    EVERY_LABEL = True


class InterruptedLoad(OpenSearchBackend):
    """Ctrl-C arrives while the documents are being sent (after the first bulk request)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.prefix = "interrupted"

    def _sources(self, *args):
        for i, pair in enumerate(super()._sources(*args)):
            if i == 600:
                raise KeyboardInterrupt
            yield pair


class RejectedDocument(OpenSearchBackend):
    """One document carries a field the strict mapping does not know: the node refuses it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.prefix = "rejected"

    def _sources(self, *args):
        for i, (doc_id, source) in enumerate(super()._sources(*args)):
            yield doc_id, (dict(source, unexpected=1) if i == 10 else source)
