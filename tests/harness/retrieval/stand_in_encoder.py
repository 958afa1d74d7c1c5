"""A stand-in embedding encoder for tests: the encoder interface the harness calls
(``label``, ``query_texts``, ``document_texts``, ``encode``), vectors made from the text
by a subclass, and a record of every text it was asked to embed, exactly as it arrived."""

from __future__ import annotations

import hashlib

import numpy as np


class StandInEncoder:
    def __init__(self, model_id: str, query_prefix: str, document_prefix: str, dimension: int,
                 weights_sha256: str | None = None):
        self.model_id, self.dimension = model_id, dimension
        self.weights_sha256 = weights_sha256 or hashlib.sha256(model_id.encode()).hexdigest()
        self.query_prefix, self.document_prefix = query_prefix, document_prefix
        #: every text passed to :meth:`encode`, in order
        self.encoded: list[str] = []

    @property
    def label(self):
        return f"{self.model_id}@{self.weights_sha256[:12]}"

    def query_texts(self, texts):
        return [self.query_prefix + t for t in texts]

    def document_texts(self, texts):
        return [self.document_prefix + t for t in texts]

    def encode(self, texts):
        self.encoded.extend(texts)
        return self.vectors(texts)

    def vectors(self, texts) -> np.ndarray:  # pragma: no cover - subclasses define it
        raise NotImplementedError
