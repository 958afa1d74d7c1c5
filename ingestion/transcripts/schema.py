"""Tables of the transcript store (SQLAlchemy Core) and its schema-version check.

The store holds what aggregation questions are answered from: per-file metadata (title,
series, team, kind, recorded date and where it came from, duration), every speaker turn with
its position and times, and who attended.  Rows are keyed by corpus, so two corpora whose
file ids collide never mix, and one corpus can be replaced without touching the others.

``schema_version`` holds exactly one row.  A store written by another schema version is
refused with a message naming both versions: nothing here migrates silently.
"""

from __future__ import annotations

from sqlalchemy import (Column, Date, Float, ForeignKeyConstraint, Index, Integer, MetaData,
                        String, Table, Text, UniqueConstraint, inspect, select)

#: the schema this code reads and writes
SCHEMA_VERSION = 1

metadata = MetaData()

schema_version = Table(
    "schema_version", metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
)

corpora = Table(
    "corpora", metadata,
    Column("name", String(200), primary_key=True),
    Column("sha256", String(64), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("licence", Text, nullable=False),
    Column("tier", String(1), nullable=False),
    Column("files", Integer, nullable=False),
    Column("turns", Integer, nullable=False),
)

files = Table(
    "files", metadata,
    Column("corpus", String(200), primary_key=True),
    Column("id", String(200), primary_key=True),
    Column("title", Text),
    Column("series", Text),
    Column("team", Text),
    Column("kind", Text),
    Column("recorded_date", Date),
    Column("date_source", Text),
    Column("duration", Float),
    Column("domain", Text),
    ForeignKeyConstraint(["corpus"], ["corpora.name"]),
)
Index("files_by_series", files.c.corpus, files.c.team, files.c.kind)

turns = Table(
    "turns", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("corpus", String(200), nullable=False),
    Column("file_id", String(200), nullable=False),
    Column("turn_index", Integer, nullable=False),
    Column("speaker", Text),
    Column("start", Float, nullable=False),
    Column("end", Float, nullable=False),
    Column("text", Text, nullable=False),
    ForeignKeyConstraint(["corpus", "file_id"], ["files.corpus", "files.id"]),
    UniqueConstraint("corpus", "file_id", "turn_index", name="turns_position"),
)
Index("turns_chronological", turns.c.corpus, turns.c.file_id, turns.c.start, turns.c.end,
      turns.c.id)

rosters = Table(
    "rosters", metadata,
    Column("corpus", String(200), primary_key=True),
    Column("file_id", String(200), primary_key=True),
    Column("speaker", String(400), primary_key=True),
    ForeignKeyConstraint(["corpus", "file_id"], ["files.corpus", "files.id"]),
)

#: every table, in the order rows are deleted (children first)
TABLES = (turns, rosters, files, corpora, schema_version)
TABLE_NAMES = tuple(sorted(t.name for t in TABLES))


class SchemaVersionError(ValueError):
    """The database holds a transcript store of another schema version, or something else."""


def ensure_schema(engine, where: str) -> None:
    """Create the tables in an empty database; refuse one written by another version.

    ``where`` names the store in messages (its URL with the password hidden).
    """
    present = set(inspect(engine).get_table_names())
    ours = present & set(TABLE_NAMES)
    if not ours:
        with engine.begin() as conn:
            metadata.create_all(conn)
            conn.execute(schema_version.insert(), [{"version": SCHEMA_VERSION}])
        return
    if "schema_version" not in present:
        raise SchemaVersionError(
            f"{where}: holds tables {sorted(ours)} but no schema_version table; it is not a "
            f"transcript store this code wrote (expected schema version {SCHEMA_VERSION})")
    with engine.connect() as conn:
        versions = [row[0] for row in conn.execute(select(schema_version.c.version))]
    if len(versions) != 1:
        raise SchemaVersionError(
            f"{where}: schema_version holds {len(versions)} rows {sorted(versions)}; expected "
            f"exactly one (version {SCHEMA_VERSION})")
    (found,) = versions
    if found != SCHEMA_VERSION:
        newer = "newer" if found > SCHEMA_VERSION else "older"
        raise SchemaVersionError(
            f"{where}: transcript store schema version {found} is {newer} than the version "
            f"{SCHEMA_VERSION} this code reads; refill it into a new store (or use code of "
            f"schema version {found})")
    missing = sorted(set(TABLE_NAMES) - present)
    if missing:
        raise SchemaVersionError(f"{where}: transcript store of schema version {found} lacks "
                                 f"tables {missing}")
