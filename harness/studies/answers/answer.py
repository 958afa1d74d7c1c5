"""What an answerer returns (:class:`Answer`), the bound on rows a query may read, and the
error for reaching it.  The answerers (:mod:`.reference`, :mod:`.product`,
:mod:`.opensearch`) import these from here, so the registry in :mod:`.answerers`, which
names them by string, is imported by none of them."""

from __future__ import annotations

from dataclasses import dataclass, field

#: default bound on rows any one answering query may read; reaching it raises
ROW_LIMIT = 100_000


class TruncatedResult(RuntimeError):
    """A read hit its row limit: the answer would be a count that only looks right."""


@dataclass(frozen=True)
class Answer:
    """One answer (``value`` None: declined), how it was obtained, and what to know about it
    (ties, files excluded for lack of a date ...)."""

    value: object
    mechanism: str
    notes: dict = field(default_factory=dict)

    @property
    def answered(self) -> bool:
        return self.value is not None


def declined(reason: str) -> Answer:
    return Answer(None, f"declined: {reason}")
