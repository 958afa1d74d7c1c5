"""Per-query values grouped the way metric rows are: corpus (or pooled ``a+b``), class, measure.

A metric row ``(corpus, query_class)`` of metrics.json is a mean over a set of queries; the
statistics need that set's per-query values as a vector, in a fixed order, so a seeded
resample means the same thing on every run.  Queries are keyed by ``(corpus, query_id)``
(query ids are unique within a corpus, not across corpora) and vectors are ordered by that
key.  A query with no class counts only towards ``all``, exactly as :func:`harness.evaluation.rows.build_rows`
counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from harness.core.tiers import most_restrictive_tier
from harness.claims.metrics import ALL, pooled_name

QueryKey = tuple[str, str]
_FIELDS = ("corpus", "tier", "query_id", "measure", "value")


@dataclass(frozen=True)
class QueryValues:
    """One measure's values over one row's queries, ordered by ``(corpus, query_id)``."""

    corpus: str
    tier: str
    query_class: str
    measure: str
    keys: tuple[QueryKey, ...]
    values: np.ndarray

    @property
    def n(self) -> int:
        return len(self.keys)

    @property
    def mean(self) -> float:
        if not self.keys:
            raise ValueError(f"no queries for {self.corpus} / {self.query_class} / {self.measure}")
        return float(np.mean(self.values))


@dataclass(frozen=True)
class _QueryInfo:
    tier: str
    query_class: str | None
    values: dict


class PerQueryIndex:
    """Per-query rows (``per_query.jsonl``) indexed by ``(corpus, query_id)``.

    Refuses a query listed twice for one measure, or with two classes or two tiers, naming
    the source and the query.
    """

    def __init__(self, rows: Iterable[Mapping], source: str = "per_query.jsonl"):
        self.source = str(source)
        info: dict[QueryKey, _QueryInfo] = {}
        for number, row in enumerate(rows, start=1):
            for name in _FIELDS:
                if name not in row:
                    raise ValueError(f"{self.source}: row {number}: field {name!r}: missing")
            if not isinstance(row["value"], (int, float)) or isinstance(row["value"], bool) \
                    or not np.isfinite(row["value"]):
                raise ValueError(f"{self.source}: row {number}: field 'value': not a finite number: "
                                 f"{row['value']!r}")
            key = (str(row["corpus"]), str(row["query_id"]))
            cls = row.get("query_class")
            cls = None if cls is None else str(cls)
            entry = info.get(key)
            if entry is None:
                entry = info[key] = _QueryInfo(str(row["tier"]), cls, {})
            elif entry.query_class != cls or entry.tier != row["tier"]:
                raise ValueError(
                    f"{self.source}: row {number}: query {key[1]!r} of corpus {key[0]!r} has class "
                    f"{cls!r} / tier {row['tier']!r} here but {entry.query_class!r} / {entry.tier!r} "
                    f"on an earlier row")
            measure = str(row["measure"])
            if measure in entry.values:
                raise ValueError(f"{self.source}: row {number}: field 'measure': query {key[1]!r} of "
                                 f"corpus {key[0]!r} has {measure!r} twice")
            entry.values[measure] = float(row["value"])
        self._info = info

    # ------------------------------------------------------------------ description

    @property
    def corpora(self) -> tuple[str, ...]:
        return tuple(sorted({c for c, _ in self._info}))

    def measures(self) -> tuple[str, ...]:
        found: set[str] = set()
        for entry in self._info.values():
            found.update(entry.values)
        return tuple(sorted(found))

    def classes(self, corpus: str) -> tuple[str, ...]:
        return tuple(sorted({e.query_class for (c, _), e in self._info.items()
                             if c == corpus and e.query_class is not None}))

    def groups(self) -> list[tuple[str, str]]:
        """Every ``(corpus, query_class)`` a metric row can have: each class and ``all`` per
        corpus, then the pooled ``all`` row when there is more than one corpus."""
        out = []
        for corpus in self.corpora:
            out += [(corpus, cls) for cls in self.classes(corpus)]
            out.append((corpus, ALL))
        if len(self.corpora) > 1:
            out.append((pooled_name(self.corpora), ALL))
        return out

    # ------------------------------------------------------------------ selection

    def keys(self, corpus: str, query_class: str) -> tuple[QueryKey, ...]:
        """The queries of row ``(corpus, query_class)``, sorted; ``a+b`` pools corpora."""
        corpora = set(corpus.split("+"))
        unknown = sorted(corpora - set(self.corpora))
        if unknown:
            raise ValueError(f"{self.source}: no per-query rows for corpus {unknown[0]!r}; "
                             f"corpora present: {list(self.corpora)}")
        return tuple(sorted(k for k, e in self._info.items()
                            if k[0] in corpora and (query_class == ALL or e.query_class == query_class)))

    def tier(self, keys: Iterable[QueryKey]) -> str:
        return most_restrictive_tier({self._info[k].tier for k in keys})

    def query_class(self, key: QueryKey) -> str | None:
        return self._info[key].query_class

    def values(self, keys: Iterable[QueryKey], measure: str) -> np.ndarray:
        keys = list(keys)
        out = np.empty(len(keys), dtype=np.float64)
        for i, key in enumerate(keys):
            got = self._info[key].values.get(measure)
            if got is None:
                raise ValueError(f"{self.source}: query {key[1]!r} of corpus {key[0]!r} has no value "
                                 f"for measure {measure!r}")
            out[i] = got
        return out

    def select(self, corpus: str, query_class: str, measure: str) -> QueryValues:
        keys = self.keys(corpus, query_class)
        if not keys:
            raise ValueError(f"{self.source}: no queries for corpus {corpus!r}, class {query_class!r}")
        return QueryValues(corpus, self.tier(keys), query_class, measure, keys,
                           self.values(keys, measure))

    def has(self, key: QueryKey) -> bool:
        return key in self._info


def default_slice_corpus(corpora) -> str:
    """The corpus a slice defaults to: the only one, else all of them pooled."""
    corpora = sorted(corpora)
    return corpora[0] if len(corpora) == 1 else pooled_name(corpora)
