"""The team ingester: every complete submission in the shared store applied exactly once.

``python -m warehouse ingest --watch URL --snapshots DIR`` (``--once`` for cron).  Each cycle
lists the store's complete submissions (:mod:`harness.core.submissions`), skips those the
warehouse has recorded, and applies the rest oldest first through the same path as a local
ingest (:func:`warehouse.load.load_results`: tiers recomputed from licences and the
registry, every row against the per-query values, the pins; then
:func:`warehouse.ingest.store`), plus one rule of its own: tier A is trusted only from a
signature by a key in ``--trusted-keys`` (:func:`harness.core.signing.verify_directory`);
otherwise every row is stored capped at tier B and the reason is recorded.  A judging task
follows the same rule; a labels batch takes the tier of the stored task it labels
(:mod:`warehouse.judging`).

Exactly once: the ``submissions`` row (migration 010) is written in the same DuckDB
transaction as the rows, and checked again inside it, so a SIGKILL at any point leaves the
submission applied with its rows or not at all.  A submission that is refused (a file
that does not match its manifest, a claim that fails a check) is recorded as quarantined
with its located reason and never blocks the others; one that fails for a passing cause
(store unreachable, warehouse busy) is left for the next cycle.  One ingester per store is
active at a time (:mod:`warehouse.lease`).  After a cycle that changed anything the
snapshots are published (:mod:`warehouse.snapshots`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from harness.core.atomic import tidy_dead
from harness.core.signing import Verdict, verify_directory
from harness.core.store import Store, StoreError
from harness.core.submissions import (SubmissionRefused, complete, fetch, read_manifest,
                                      submitted_at)
from warehouse import judging, snapshots
from warehouse.db import Connection, connect
from warehouse.errors import IngestRefused, WarehouseError, WarehouseMissing
from warehouse.ingest import cap_unsigned, ingest_document, store as store_run
from warehouse.lease import DEFAULT_TTL, Lease
from warehouse.load import load_results

log = logging.getLogger(__name__)

WAREHOUSE_NAME = "warehouse.duckdb"
WORK_PREFIX = ".ingest-work-"
#: the tier a submission is capped at when no trusted signature vouches for tier A
UNTRUSTED_CAP = "B"

#: Test seam: called with the digest right after a submission is committed (or refused),
#: before the next one starts.  Nothing in the product sets it.
after_each: Callable[[str], None] | None = None


class AlreadyApplied(Exception):
    """Another ingester applied this submission first (found inside the transaction)."""


@dataclass
class CycleReport:
    applied: list[str] = field(default_factory=list)
    quarantined: list[tuple[str, str]] = field(default_factory=list)
    capped: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0
    published: bool = False
    standby: str = ""


def applied_digests(db_path) -> set[str]:
    """Digests the warehouse records (applied or quarantined)."""
    try:
        with connect(db_path, read_only=True, check_schema=False) as conn:
            if not conn.query_one("SELECT count(*) FROM information_schema.tables "
                                  "WHERE table_name = 'submissions'")[0]:
                return set()
            return {d for (d,) in conn.query_all("SELECT digest FROM submissions")}
    except WarehouseMissing:
        return set()


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _located(reason: str, work: Path, digest: str) -> str:
    """A reason naming ``submission <digest>/file`` rather than the work directory."""
    return reason.replace(str(work), f"submission {digest[:12]}")


@dataclass
class Ingester:
    """Applies a store's submissions to the warehouse in ``snapshots_dir``."""

    store: Store
    snapshots_dir: Path
    trusted: Mapping[str, Any]
    db_path: Path | None = None
    lease_ttl: float = DEFAULT_TTL
    #: within a long batch, the snapshots are published at least this often (seconds)
    publish_every: float = 5.0
    lease: Lease = field(init=False)

    def __post_init__(self) -> None:
        self.snapshots_dir = Path(self.snapshots_dir)
        self.snapshots_dir.mkdir(parents=True, exist_ok=True)
        if self.db_path is None:
            self.db_path = self.snapshots_dir / WAREHOUSE_NAME
        self.lease = Lease(self.store, ttl=self.lease_ttl)
        self._tidy_work()

    # ------------------------------------------------------------------ bookkeeping

    def _tidy_work(self) -> None:
        """Remove the work directories of ingesters that died (their pid is gone)."""
        tidy_dead(self.snapshots_dir, WORK_PREFIX)

    def _recorder(self, digest: str, kind: str, *, stored_id: str | None, cap: str | None,
                  trust: str, signed_by: str | None, stamp: str,
                  reason: str | None = None) -> Callable[[Connection, bool], None]:
        state = "quarantined" if reason is not None else "applied"

        def record(conn: Connection, inserted: bool) -> None:
            if conn.query_one("SELECT 1 FROM submissions WHERE digest = ?", [digest]):
                raise AlreadyApplied(digest)
            conn.execute(
                "INSERT INTO submissions (digest, kind, state, stored_id, inserted, tier_cap, "
                "trust, signed_by, reason, store_url, submitted_at, applied_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [digest, kind, state, stored_id, inserted, cap, trust, signed_by, reason,
                 self.store.url, stamp or None, _now()])
        return record

    def _quarantine(self, digest: str, kind: str, reason: str, stamp: str) -> None:
        from warehouse import schema

        record = self._recorder(digest, kind, stored_id=None, cap=None, trust="not applied",
                                signed_by=None, stamp=stamp, reason=reason)
        with connect(self.db_path, read_only=False, check_schema=False) as conn:
            schema.apply_pending(conn)
            try:
                with conn.transaction():
                    record(conn, False)
            except AlreadyApplied:
                return
        log.info("quarantined submission %s: %s", digest[:12], reason)

    # ------------------------------------------------------------------ one submission

    def apply(self, digest: str, report: CycleReport) -> None:
        """Apply one submission (or quarantine it)."""
        stamp = submitted_at(self.store, digest)
        work = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-",
                                     dir=self.snapshots_dir))
        kind = "results"
        try:
            try:
                kind = read_manifest(self.store, digest).kind
                listing, path = fetch(self.store, digest, work / "submission")
            except SubmissionRefused as exc:
                reason = _located(str(exc), work / "submission", digest)
                self._quarantine(digest, kind, reason, stamp)
                report.quarantined.append((digest, reason))
                return
            if kind in ("results", "judging-task"):
                verdict = verify_directory(path, self.trusted)
            elif kind == "labels":
                verdict = Verdict(False, "a labels batch takes the tier of the task it labels")
            else:
                verdict = Verdict(False, "a claim document submitted alone carries no "
                                         "signature")
            cap = None if verdict.trusted else UNTRUSTED_CAP
            trust = verdict.reason
            try:
                if kind == "labels":  # the stored task's tier, already capped, is the batch's
                    cap = None
                    record = self._recorder(digest, kind, stored_id=None, cap=None, trust=trust,
                                            signed_by=None, stamp=stamp)
                    judging.ingest_labels(path, self.db_path, also=record)
                elif kind == "judging-task":
                    record = self._recorder(digest, kind, stored_id=None, cap=cap, trust=trust,
                                            signed_by=verdict.key_id, stamp=stamp)
                    judging.ingest_task(path, self.db_path, tier_cap=cap, also=record)
                elif kind == "results":
                    # runinfo.json (latency) is outside every signature: never above B
                    prepared = cap_unsigned(load_results(path), UNTRUSTED_CAP)
                    prepared.run_row["source_dir"] = f"{self.store.url}/submissions/{digest}"
                    record = self._recorder(digest, kind, stored_id=prepared.run_id, cap=cap,
                                            trust=trust, signed_by=verdict.key_id, stamp=stamp)
                    store_run(prepared, self.db_path, tier_cap=cap, also=record)
                else:
                    from warehouse.load import document_identity, load_document

                    doc, source = load_document(path)
                    doc_id = document_identity(doc, source)[0]
                    record = self._recorder(digest, kind, stored_id=doc_id, cap=cap,
                                            trust=trust, signed_by=verdict.key_id, stamp=stamp)
                    ingest_document(path, self.db_path, tier_cap=cap, also=record)
            except AlreadyApplied:
                report.skipped += 1
                return
            except judging.TaskNotStored as exc:  # its task may come: left for a later cycle
                log.info("submission %s left pending: %s", digest[:12], exc)
                report.skipped += 1
                return
            except IngestRefused as exc:
                reason = _located(str(exc), work / "submission", digest)
                self._quarantine(digest, kind, reason, stamp)
                report.quarantined.append((digest, reason))
                return
            except (StoreError, WarehouseError, OSError):
                raise  # passing: the cycle stops and is retried, nothing half-applied
            except Exception as exc:  # a check that failed unforeseen: never block the rest
                log.exception("submission %s could not be checked", digest[:12])
                reason = _located(f"could not be checked: {type(exc).__name__}: {exc}",
                                  work / "submission", digest)
                self._quarantine(digest, kind, reason, stamp)
                report.quarantined.append((digest, reason))
                return
            report.applied.append(digest)
            if cap is not None:
                report.capped.append((digest, trust))
                log.info("submission %s stored with its tier capped at %s: %s",
                         digest[:12], cap, trust)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if after_each is not None:
            after_each(digest)

    # ------------------------------------------------------------------ one cycle

    def pending(self) -> list[str]:
        """Complete submissions not yet recorded, oldest submission first."""
        done = applied_digests(self.db_path)
        todo = [d for d in complete(self.store) if d not in done]
        return sorted(todo, key=lambda d: (submitted_at(self.store, d), d))

    def snapshots_stale(self) -> bool:
        """Do the snapshots miss something the warehouse holds (a publisher killed between
        a COMMIT and the renames)?  Compared by the submissions each records."""
        if not Path(self.db_path).exists():
            return False
        for audience in snapshots.AUDIENCES:
            if not snapshots.snapshot_path(self.snapshots_dir, audience).exists():
                return True
        internal = snapshots.snapshot_path(self.snapshots_dir, "internal")
        return applied_digests(self.db_path) != applied_digests(internal)

    def cycle(self) -> CycleReport:
        """Take (or renew) the lease, apply what is pending, publish when anything changed.
        Raises :class:`~harness.core.store.StoreError` when the store cannot be reached:
        nothing half-applied is left (each submission is one transaction)."""
        report = CycleReport()
        if not self.lease.acquire():
            report.standby = f"the lease is held by {self.lease.holder}"
            return report
        stale = self.snapshots_stale()
        published = time.monotonic()
        changed = False
        for digest in self.pending():
            if not self.lease.fresh() and not self.lease.acquire():  # renew when a third old
                report.standby = f"the lease was taken over by {self.lease.holder}"
                break
            done = len(report.applied) + len(report.quarantined)
            self.apply(digest, report)
            # a submission left pending (a labels batch whose task is not here) changes nothing
            changed = changed or len(report.applied) + len(report.quarantined) > done
            if changed and time.monotonic() - published > self.publish_every:  # show it
                snapshots.publish(self.db_path, self.snapshots_dir)
                published, changed, report.published = time.monotonic(), False, True
        if changed or stale:
            snapshots.publish(self.db_path, self.snapshots_dir)
            report.published = True
        return report

    def run(self, *, once: bool = False, poll: float = 2.0, retries: int = 3,
            say: Callable[[str], None] = print) -> int:
        """Cycle until stopped (``once``: until nothing is pending).  A store that cannot be
        reached, a busy or failing warehouse or a failing disk is reported in one line and
        retried with a growing pause (``once``: ``retries`` times, then exit 1)."""
        failures, waited, shown = 0, None, ""
        while True:
            try:
                report = self.cycle()
            except (StoreError, WarehouseError, OSError) as exc:  # one line, no traceback
                failures += 1
                say(f"error: {exc}; nothing was half-applied; retrying "
                    f"({failures}{f' of {retries}' if once else ''})")
                if once and failures >= retries:
                    with contextlib.suppress(StoreError):  # the next cron run need not wait
                        self.lease.release()
                    return 1
                time.sleep(min(poll * 2 ** failures, 60.0))
                continue
            failures = 0
            for digest in report.applied:
                say(f"applied submission {digest}")
            for digest, why in report.capped:
                say(f"capped at tier {UNTRUSTED_CAP}: submission {digest}: {why}")
            for digest, why in report.quarantined:
                say(f"quarantined submission {digest}: {why}")
            if report.published:
                say(f"published {snapshots.PUBLISHABLE} and {snapshots.INTERNAL} in "
                    f"{self.snapshots_dir}")
            if report.standby and report.standby != shown:
                say(f"standing by: {report.standby}")
            shown = report.standby
            if once and report.standby:
                # a holder that died leaves its lease until it expires: wait that long once
                waited = time.monotonic() if waited is None else waited
                if time.monotonic() - waited > self.lease_ttl + poll:
                    return 0
                time.sleep(poll)
                continue
            if once:
                # done when nothing is pending, or what is left waits (a labels batch whose
                # task is not here) and this cycle applied nothing
                if not self.pending() or not (report.applied or report.quarantined):
                    self.lease.release()
                    return 0
                continue
            time.sleep(poll)
