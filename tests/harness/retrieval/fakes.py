"""A backend whose index ends up holding vectors from two named models, the way an index
re-embedded halfway through a model change would: the refusal path needs one."""

from __future__ import annotations

from harness.retrieval.backends.embedded import EmbeddedBackend

OTHER_MODEL = "other/embedding-model"


class MixedBackend(EmbeddedBackend):
    """Embeds like the embedded backend, then records the first file's documents as
    embedded by :data:`OTHER_MODEL` (a second named model)."""

    name = "mixed-test"

    def _index_dense(self, docs):
        super()._index_dense(docs)
        first_file = min(d.file_id for d in docs)
        other = f"{OTHER_MODEL}@{self.encoder.encoder.weights_sha256[:12]}"
        # ``docs`` arrive in index order, the order of ``self._labels``
        self._labels = [other if d.file_id == first_file else label
                        for d, label in zip(docs, self._labels)]
