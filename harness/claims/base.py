"""What every claim kind shares: located failures, field checkers, canonical identity, the
columns a kind stores, and the frozen-dataclass round trip.

A claim kind is one frozen dataclass whose fields are its document's top-level keys.  It
validates a document (naming the file and the field at fault), builds itself from a checked
document (:meth:`Claim.from_dict`) and gives it back (:meth:`Claim.to_dict`, the canonical
content: ``from_dict(to_dict(x)) == x``), says which warehouse tables it fills and with
which columns (:attr:`Claim.TABLES`, as type names: the warehouse turns them into Arrow), and
builds those rows (:meth:`Claim.table_rows`).  A new kind is one class and one SQL migration.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import json
import math
import os
import re
from datetime import datetime
from typing import (Any, ClassVar, Final, Hashable, Iterable, Literal, Mapping, NoReturn, Sequence,
                    TypeVar, overload)

from harness.core.canonical import canonical_json, sha256_text
from harness.core.formats import FormatError
from harness.core.tiers import TIERS, at_least_as_restrictive

#: slack for comparing two float sums of the same numbers (documents round to 10 decimals)
TOLERANCE = 1e-8
SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: column type names a kind may declare (the warehouse maps them to Arrow types)
COLUMN_TYPES = frozenset({"string", "double", "int64", "int32", "bool", "timestamp",
                          "string_list", "double_list", "bool_list"})

#: a warehouse table's columns: ``(name, type name)`` pairs
Columns = tuple[tuple[str, str], ...]
#: a decoded JSON object (a document, one of its blocks, one table row)
JSON = dict[str, Any]
#: rows per warehouse table (:meth:`Claim.table_rows`)
TableRows = dict[str, list[JSON]]
#: what a failure names as its file: a path, or a label such as ``<stored>``
SourceName = str | os.PathLike[str]
C = TypeVar("C", bound="Claim")


class ClaimError(FormatError):
    """A claim document that is malformed or inconsistent: names the file, line and field."""


class _Absent(enum.Enum):
    """The default of an optional top-level key: the document does not carry it.

    A one-member enum, so a type checker narrows ``value is ABSENT`` (and copies and pickles
    keep the one instance)."""

    ABSENT = "ABSENT"

    def __repr__(self) -> str:
        return "ABSENT"

    __str__ = __repr__


#: the one :class:`_Absent`; fields defaulting to it are typed ``Any`` (they hold any JSON
#: value when the document carries the key)
ABSENT: Final = _Absent.ABSENT


# --------------------------------------------------------------------------- checkers


def fail(source: SourceName, where: str | None, message: str, line: int | None = None) -> NoReturn:
    raise ClaimError(source, line, where, message)


def mapping(value: object, source: SourceName, where: str | None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        fail(source, where, f"must be an object, got {type(value).__name__}")
    return value


def seq(value: object, source: SourceName, where: str | None) -> list[Any]:
    if not isinstance(value, list):
        fail(source, where, f"must be a list, got {type(value).__name__}")
    return value


def need(doc: Mapping[str, Any], names: Iterable[str], source: SourceName, prefix: str = "") -> None:
    for name in names:
        if name not in doc:
            fail(source, f"{prefix}{name}", "missing")


@overload
def text(value: object, source: SourceName, where: str, *, nullable: Literal[False] = False) -> str: ...
@overload
def text(value: object, source: SourceName, where: str, *, nullable: bool) -> str | None: ...
def text(value: object, source: SourceName, where: str, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value:
        fail(source, where, f"must be a non-empty string{' or null' if nullable else ''}, "
                            f"got {value!r}")
    return value


@overload
def number(value: object, source: SourceName, where: str, *, nullable: Literal[False] = False,
           lo: float = ..., hi: float = ...) -> float: ...
@overload
def number(value: object, source: SourceName, where: str, *, nullable: bool, lo: float = ...,
           hi: float = ...) -> float | None: ...
def number(value: object, source: SourceName, where: str, *, nullable: bool = False,
           lo: float = -math.inf, hi: float = math.inf) -> float | None:
    if value is None and nullable:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not lo <= value <= hi):
        fail(source, where, f"must be a finite number in [{lo:g}, {hi:g}]"
                            f"{' or null' if nullable else ''}, got {value!r}")
    return float(value)


@overload
def integer(value: object, source: SourceName, where: str, *, nullable: Literal[False] = False,
            lo: int = ...) -> int: ...
@overload
def integer(value: object, source: SourceName, where: str, *, nullable: bool,
            lo: int = ...) -> int | None: ...
def integer(value: object, source: SourceName, where: str, *, nullable: bool = False,
            lo: int = 0) -> int | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        fail(source, where, f"must be an integer >= {lo}{' or null' if nullable else ''}, "
                            f"got {value!r}")
    return value


@overload
def flag(value: object, source: SourceName, where: str, *,
         nullable: Literal[False] = False) -> bool: ...
@overload
def flag(value: object, source: SourceName, where: str, *, nullable: bool) -> bool | None: ...
def flag(value: object, source: SourceName, where: str, *, nullable: bool = False) -> bool | None:
    if value is None and nullable:
        return None
    if not isinstance(value, bool):
        fail(source, where, f"must be true or false, got {value!r}")
    return value


def tier(value: object, source: SourceName, where: str = "tier") -> str:
    # only a string equals a member of TIERS, so the isinstance test refuses nothing more
    if not isinstance(value, str) or value not in TIERS:
        fail(source, where, f"unknown licence tier {value!r}; expected one of {sorted(TIERS)}")
    return value


def choice(value: object, allowed: Sequence[str], source: SourceName, where: str) -> str:
    # as in tier(): only a string equals a member of ``allowed``
    if not isinstance(value, str) or value not in allowed:
        fail(source, where, f"{value!r} is not one of {sorted(allowed)}")
    return value


def run_id_value(value: object, source: SourceName, where: str) -> str:
    if not isinstance(value, str) or not SHA256.match(value):
        fail(source, where, f"must be a run id (64 hex digits), got {value!r}")
    return value


def unique(keys: Sequence[Hashable], source: SourceName, what: str, prefix: str = "rows") -> None:
    seen: dict[Hashable, int] = {}
    for i, key in enumerate(keys):
        if key in seen:
            fail(source, f"{prefix}[{i}]", f"repeats {prefix}[{seen[key]}] ({what} {key})")
        seen[key] = i


def within(value: float, lower: float, upper: float) -> bool:
    return lower - TOLERANCE <= value <= upper + TOLERANCE


def not_laxer(claimed: str, floor: str, source: SourceName, where: str, why: str) -> None:
    """Refuse a tier less restrictive than ``floor`` (the one the licences give)."""
    if not at_least_as_restrictive(claimed, floor):
        fail(source, where, f"tier {claimed!r} is less restrictive than {floor!r}: {why}")


def header(doc: object, kind: str, schema_version: int, source: SourceName) -> None:
    obj = mapping(doc, source, None)
    if obj.get("kind") != kind:
        fail(source, "kind", f"expected {kind!r}, got {obj.get('kind')!r}")
    if obj.get("schema_version") != schema_version:
        fail(source, "schema_version", f"unsupported schema version "
                                       f"{obj.get('schema_version')!r}; expected {schema_version}")


# --------------------------------------------------------------------------- identity


def canonical(content: object) -> Any:
    """``content`` as its canonical JSON reads back (floats rounded as documents store
    them), so table columns hold exactly the numbers of the stored document."""
    return json.loads(canonical_json(content))


def content_id(content: object) -> str:
    """sha256 of the canonical content: the id rows carry."""
    return sha256_text(canonical_json(content))


def pooled_corpus(names: Iterable[str]) -> str:
    return "+".join(sorted(names))


# --------------------------------------------------------------------------- the kinds


@dataclasses.dataclass(frozen=True)
class Claim:
    """Base of every kind (module docstring).  Subclasses are frozen dataclasses whose fields
    are the document's top-level keys; a field defaulting to :data:`ABSENT` is optional."""

    KIND: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = 1
    #: the file name when the kind also lives inside a results directory
    RESULTS_FILE: ClassVar[str | None] = None
    #: warehouse table -> its columns; the first table is the one "already stored" is read from
    TABLES: ClassVar[Mapping[str, Columns]] = {}

    # ---- building and reading back

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        """Refuse a document of this kind that is malformed or inconsistent (ClaimError
        naming ``source`` and the field)."""
        header(doc, cls.KIND, cls.SCHEMA_VERSION, source)

    @classmethod
    def field_keys(cls) -> dict[str, str]:
        """Document key -> dataclass field (a key that is a Python keyword, such as
        ``lambda``, is a field ``lambda_`` with ``metadata={"key": "lambda"}``)."""
        return {f.metadata.get("key", f.name): f.name for f in dataclasses.fields(cls)}

    @classmethod
    def from_dict(cls: type[C], doc: Any, source: str | None = None) -> C:
        """A checked claim from a decoded document (its numbers as the canonical file
        stores them)."""
        source = source or f"<{cls.KIND} document>"
        cls.validate(doc, source)
        keys = cls.field_keys()
        extra = sorted(set(doc) - set(keys))
        if extra:
            fail(source, extra[0], f"not a field of a {cls.KIND} document (fields: "
                                   f"{sorted(keys)})")
        content = canonical(dict(doc))
        return cls(**{keys[k]: v for k, v in content.items()})

    def to_dict(self) -> JSON:
        """The document, canonical content (optional keys the document lacks stay absent)."""
        out: JSON = {}
        for key, name in self.field_keys().items():
            value = getattr(self, name)
            if value is not ABSENT:
                out[key] = copy.deepcopy(value)
        return out

    def canonical_json(self) -> str:
        return canonical_json(self.to_dict())

    def identity(self) -> str:
        """sha256 of the canonical document (what the warehouse keys it by)."""
        return content_id(self.to_dict())

    # ---- what the warehouse needs

    def claimed_tier(self) -> str | None:
        """The tier the document states for itself (None when it states none)."""
        value = getattr(self, "tier", ABSENT)
        return None if value is ABSENT else value

    def referenced_runs(self) -> tuple[str, ...]:
        """Run ids the document's numbers come from (the warehouse checks their tiers)."""
        return ()

    def corpus_label(self) -> str | None:
        value = getattr(self, "corpus", ABSENT)
        return value if isinstance(value, str) else None

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> TableRows:
        """Rows per warehouse table (keys of :attr:`TABLES`), canonical numbers."""
        return {}

    def check_against_run(self, metrics: Mapping[str, Any], source: str) -> None:
        """Inside a results directory: refuse a document that is not this run's."""


def check_columns(kind: type[Claim]) -> None:
    """A kind's declared columns are well formed (called by the registry at import)."""
    for table, columns in kind.TABLES.items():
        names = [n for n, _ in columns]
        if len(set(names)) != len(names):
            raise ValueError(f"{kind.__name__}: table {table} declares a column twice")
        for name, kind_name in columns:
            if kind_name not in COLUMN_TYPES:
                raise ValueError(f"{kind.__name__}: column {table}.{name} has unknown type "
                                 f"{kind_name!r}; known: {sorted(COLUMN_TYPES)}")
