"""Versioned SQL migrations: ``migrations/NNN_name.sql``, applied in order, checksums recorded.

Numbers are pre-assigned (001 core, 002 statistics, 003 certificates, 004 migration
decisions, 005 answers, 006 shared-index tiers, 007 tier ranks), so a later number may land before an
earlier one: every file not yet applied is applied, lowest number first, each in its own
transaction together with its ``schema_migrations`` row.  A file whose checksum differs
from the one recorded when it was applied is refused: an applied migration is history, and
changing it would make two warehouses with the same version hold different schemas.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from harness.core.tiers import TIERS, rank
from warehouse.errors import MigrationEdited, SchemaOutOfDate

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")

_CREATE_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    checksum   VARCHAR NOT NULL,
    applied_at TIMESTAMP NOT NULL
)
"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    checksum: str
    sql: str

    @property
    def filename(self) -> str:
        return f"{self.version:03d}_{self.name}.sql"


def available(migrations_dir=None) -> tuple[Migration, ...]:
    """The migrations this code ships, by version; a misnamed or duplicate file is refused."""
    folder = Path(migrations_dir) if migrations_dir is not None else MIGRATIONS_DIR
    found: dict[int, Migration] = {}
    for path in sorted(folder.glob("*.sql")):
        match = _NAME.match(path.name)
        if not match:
            raise SchemaOutOfDate(f"{path}: migration files are named NNN_name.sql "
                                  "(three digits, lower-case name)")
        version = int(match.group(1))
        if version in found:
            raise SchemaOutOfDate(f"{path}: version {version:03d} is already used by "
                                  f"{found[version].filename}")
        text = path.read_bytes().replace(b"\r\n", b"\n")
        found[version] = Migration(version, match.group(2), hashlib.sha256(text).hexdigest(),
                                   text.decode("utf-8"))
    return tuple(found[v] for v in sorted(found))


def applied(conn) -> dict[int, tuple[str, str]]:
    """``{version: (name, checksum)}`` recorded in the warehouse (empty for a new file)."""
    exists = conn.query_one(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_name = 'schema_migrations'")[0]
    if not exists:
        return {}
    rows = conn.query_all("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
    return {int(v): (name, checksum) for v, name, checksum in rows}


def _compare(conn, migrations) -> tuple[dict, list[Migration]]:
    """Raise if an applied migration was edited or is unknown; return (applied, pending)."""
    done = applied(conn)
    by_version = {m.version: m for m in migrations}
    for version, (name, checksum) in sorted(done.items()):
        ours = by_version.get(version)
        if ours is None:
            raise SchemaOutOfDate(
                f"{conn.path}: migration {version:03d}_{name} is applied but this code does not "
                f"ship it (it knows {[m.filename for m in migrations]}); "
                "the warehouse is newer than this code")
        if ours.checksum != checksum or ours.name != name:
            raise MigrationEdited(
                f"{conn.path}: migration {version:03d}_{name} was applied with checksum "
                f"{checksum[:12]}, but {ours.filename} now has {ours.checksum[:12]}; an applied "
                "migration is never edited: add a new numbered migration instead")
    pending = [m for m in migrations if m.version not in done]
    return done, pending


def check(conn, migrations_dir=None) -> int:
    """The schema version (highest applied migration) if the warehouse is up to date.

    Raises :class:`SchemaOutOfDate` when migrations are pending, unknown or edited.
    """
    migrations = available(migrations_dir)
    done, pending = _compare(conn, migrations)
    fix = migrate_command(conn.path)
    if not done:
        raise SchemaOutOfDate(f"{conn.path} holds no warehouse schema; run `{fix}`")
    if pending:
        raise SchemaOutOfDate(
            f"{conn.path} is missing migrations {[m.filename for m in pending]}; run `{fix}`")
    if "tier_ranks" in _tables(conn) and _stored_ranks(conn) != _ranks():
        raise SchemaOutOfDate(f"{conn.path}: its tier ranks {_stored_ranks(conn)} are not this "
                              f"code's {_ranks()}; run `{fix}`")
    return max(done)


def migrate_command(path) -> str:
    """The command that brings the warehouse at ``path`` up to date, as a user types it."""
    import shlex

    return f"python -m warehouse migrate --db {shlex.quote(str(path))}"


def _ranks() -> list[tuple[str, int]]:
    """The tier order as harness.core.tiers defines it."""
    return [(tier, rank(tier)) for tier in TIERS]


def _tables(conn) -> set[str]:
    return {name for (name,) in conn.query_all(
        "SELECT table_name FROM information_schema.tables")}


def _stored_ranks(conn) -> list[tuple[str, int]]:
    return [tuple(r) for r in conn.query_all("SELECT tier, rank FROM tier_ranks ORDER BY rank")]


def sync_tier_ranks(conn) -> None:
    """Fill ``tier_ranks`` (migration 007) from :mod:`harness.core.tiers` when it differs."""
    if "tier_ranks" not in _tables(conn) or _stored_ranks(conn) == _ranks():
        return
    with conn.transaction():
        conn.execute("DELETE FROM tier_ranks")
        for tier, value in _ranks():
            conn.execute("INSERT INTO tier_ranks VALUES (?, ?)", [tier, value])


def apply_pending(conn, migrations_dir=None) -> list[Migration]:
    """Apply every pending migration (the caller holds the writer connection)."""
    migrations = available(migrations_dir)
    conn.execute(_CREATE_LEDGER)
    _, pending = _compare(conn, migrations)
    for migration in pending:
        with conn.transaction():
            conn.execute(migration.sql)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?, ?)",
                         [migration.version, migration.name, migration.checksum,
                          datetime.now(timezone.utc).replace(tzinfo=None)])
        log.debug("applied migration %s to %s", migration.filename, conn.path)
    sync_tier_ranks(conn)
    return pending
