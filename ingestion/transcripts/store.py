"""The transcript store: open it by SQLAlchemy URL, fill it from a corpus, read it in order.

Default location: ``transcripts.sqlite`` beside the warehouse file (``$HARNESS_WAREHOUSE``,
else ``./warehouse.duckdb``); any SQLAlchemy URL (``postgresql+psycopg://...``) instead.
Opening connects and checks the schema version; importing this module connects nothing.

:func:`fill` replaces one corpus's rows in one transaction, so an interrupted fill leaves the
previous rows (or none), never half of a corpus; refilling an unchanged corpus (same content
digest) is a no-op.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from harness.core import settings
from ingestion.transcripts import schema

log = logging.getLogger(__name__)

STORE_FILE = "transcripts.sqlite"

#: rows per INSERT batch while filling
BATCH = 5000


def default_url(warehouse=None) -> str:
    """``sqlite:///`` URL of ``transcripts.sqlite`` beside the warehouse file."""
    base = Path(warehouse) if warehouse is not None else settings.warehouse_path()
    return "sqlite:///" + str(base.with_name(STORE_FILE))


@dataclass(frozen=True)
class StoredTurn:
    id: int
    file_id: str
    turn_index: int
    speaker: str | None
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class FillReport:
    corpus: str
    files: int
    turns: int
    rosters: int
    #: False when the stored rows already had this corpus's content digest
    written: bool
    message: str


def _enable_sqlite_foreign_keys(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class TranscriptStore:
    """An open store: ``engine`` (SQLAlchemy), the tables in :mod:`.schema`, ordered reads."""

    def __init__(self, engine):
        self.engine = engine
        #: the URL with any password hidden (safe for messages and runinfo.json)
        self.where = engine.url.render_as_string(hide_password=True)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def corpora(self) -> dict[str, dict]:
        """Stored corpora by name: sha256, kind, licence, tier, files, turns."""
        from sqlalchemy import select

        t = schema.corpora
        with self.engine.connect() as conn:
            rows = conn.execute(select(t).order_by(t.c.name)).mappings().all()
        return {r["name"]: {k: r[k] for k in r.keys() if k != "name"} for r in rows}

    def turns(self, corpus: str, file_id: str) -> list[StoredTurn]:
        """One file's turns in the total chronological order ``(start, end, id)``."""
        from sqlalchemy import select

        t = schema.turns
        query = (select(t.c.id, t.c.file_id, t.c.turn_index, t.c.speaker, t.c.start, t.c.end,
                        t.c.text)
                 .where(t.c.corpus == corpus, t.c.file_id == file_id)
                 .order_by(t.c.start, t.c.end, t.c.id))
        with self.engine.connect() as conn:
            return [StoredTurn(*row) for row in conn.execute(query)]

    def file_ids(self, corpus: str) -> list[str]:
        from sqlalchemy import select

        f = schema.files
        with self.engine.connect() as conn:
            # sorted here, not in SQL: string collation differs between databases
            return sorted(conn.scalars(select(f.c.id).where(f.c.corpus == corpus)))


def open_store(url: str | None = None, *, warehouse=None) -> TranscriptStore:
    """Connect to the store at ``url`` (default :func:`default_url`), creating its tables in
    an empty database and refusing a store of another schema version."""
    from sqlalchemy import create_engine, event
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

    url = url or default_url(warehouse)
    try:
        engine = create_engine(url)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise ValueError(f"--store-url {url.split('@')[-1]!r}: not a usable SQLAlchemy URL "
                         f"({exc})") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _enable_sqlite_foreign_keys)
        database = engine.url.database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
    store = TranscriptStore(engine)
    try:
        schema.ensure_schema(engine, store.where)
    except OperationalError as exc:
        engine.dispose()
        raise ValueError(f"{store.where}: cannot open the transcript store: "
                         f"{exc.orig}") from None
    except BaseException:
        engine.dispose()
        raise
    return store


# --------------------------------------------------------------------------- filling


def _iso_date(value, corpus: str, file_id: str):
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"corpus {corpus!r}, file {file_id!r}, field 'recorded_date': "
                         f"{value!r} is not an ISO date (YYYY-MM-DD)") from None


def corpus_rows(corpus) -> tuple[list[dict], list[dict], list[dict]]:
    """``(files, rosters, turns)`` rows of a corpus, validated and in a deterministic order.

    A document corpus (BEIR, TREC) becomes one file per document holding one turn (its
    title and text), with no speaker and zero times.
    """
    from ingestion.corpus import DOCUMENTS

    name = corpus.name
    file_rows: list[dict] = []
    roster_rows: list[dict] = []
    turn_rows: list[dict] = []
    if corpus.kind == DOCUMENTS and not corpus.files:
        for doc in sorted(corpus.documents, key=lambda d: d.doc_id):
            file_rows.append({"corpus": name, "id": doc.doc_id, "title": doc.title or None,
                              "series": None, "team": None, "kind": None,
                              "recorded_date": None, "date_source": None, "duration": None,
                              "domain": None})
            text = f"{doc.title}\n{doc.text}" if doc.title else doc.text
            turn_rows.append({"corpus": name, "file_id": doc.doc_id, "turn_index": 0,
                              "speaker": None, "start": 0.0, "end": 0.0, "text": text})
    else:
        for f in sorted(corpus.files, key=lambda f: f.file_id):
            file_rows.append({
                "corpus": name, "id": f.file_id, "title": f.title, "series": f.series,
                "team": f.team, "kind": f.kind,
                "recorded_date": _iso_date(f.recorded_date, name, f.file_id),
                "date_source": f.date_source if f.recorded_date is not None else None,
                "duration": f.duration, "domain": f.domain})
            for speaker in sorted(set(f.roster)):
                roster_rows.append({"corpus": name, "file_id": f.file_id, "speaker": speaker})
        for t in sorted(corpus.turns, key=lambda t: (t.file_id, t.start, t.end, t.index)):
            turn_rows.append({"corpus": name, "file_id": t.file_id, "turn_index": t.index,
                              "speaker": t.speaker, "start": float(t.start),
                              "end": float(t.end), "text": t.text})
    ids = [r["id"] for r in file_rows]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"corpus {name!r}: file ids {dupes[:5]} occur more than once")
    known = set(ids)
    seen: set[tuple[str, int]] = set()
    for row in turn_rows:
        where = f"corpus {name!r}, file {row['file_id']!r}, turn {row['turn_index']}"
        if row["file_id"] not in known:
            raise ValueError(f"{where}: field 'file_id' names no file of the corpus")
        key = (row["file_id"], row["turn_index"])
        if key in seen:
            raise ValueError(f"{where}: field 'index' repeats a turn position of that file")
        seen.add(key)
    return file_rows, roster_rows, turn_rows


def _progress(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="row", unit_scale=True, file=sys.stderr,
                disable=None if enabled else True)


def fill(store: TranscriptStore, corpus, *, progress: bool = True,
         force: bool = False) -> FillReport:
    """Replace ``corpus``'s rows in the store, in one transaction; returns what was done.

    Idempotent per corpus: a corpus whose content digest (``corpus.source.sha256``) and
    counts are already stored is left as it is unless ``force``.  Other corpora's rows are
    never touched.
    """
    from sqlalchemy import delete, select

    name = corpus.name
    file_rows, roster_rows, turn_rows = corpus_rows(corpus)
    header = {"name": name, "sha256": corpus.source.sha256, "kind": corpus.kind,
              "licence": corpus.source.licence, "tier": corpus.source.tier,
              "files": len(file_rows), "turns": len(turn_rows)}
    with store.engine.begin() as conn:
        stored = conn.execute(select(schema.corpora).where(schema.corpora.c.name == name)
                              ).mappings().first()
        if not force and stored is not None and dict(stored) == header:
            message = (f"transcript store {store.where}: corpus {name!r} unchanged "
                       f"({len(file_rows)} files, {len(turn_rows)} turns)")
            log.info(message)
            return FillReport(name, len(file_rows), len(turn_rows), len(roster_rows), False,
                              message)
        for table in (schema.turns, schema.rosters, schema.files, schema.corpora):
            column = table.c.name if table is schema.corpora else table.c.corpus
            conn.execute(delete(table).where(column == name))
        conn.execute(schema.corpora.insert(), [header])
        total = len(file_rows) + len(roster_rows) + len(turn_rows)
        with _progress(total, f"filling transcripts ({name})", progress) as bar:
            for table, rows in ((schema.files, file_rows), (schema.rosters, roster_rows),
                                (schema.turns, turn_rows)):
                for i in range(0, len(rows), BATCH):
                    batch = rows[i:i + BATCH]
                    conn.execute(table.insert(), batch)
                    bar.update(len(batch))
    verb = "replaced" if stored is not None else "filled"
    message = (f"transcript store {store.where}: {verb} corpus {name!r} "
               f"({len(file_rows)} files, {len(turn_rows)} turns, {len(roster_rows)} roster rows)")
    log.info(message)
    return FillReport(name, len(file_rows), len(turn_rows), len(roster_rows), True, message)
