"""Hand a written results directory to the warehouse (its public ingest entry points only)."""

from __future__ import annotations

import logging
import shlex
import sys

log = logging.getLogger(__name__)

#: exit code when the results were written but could not be ingested (busy, schema)
NOT_INGESTED = 4


def add_warehouse_arguments(parser) -> None:
    parser.add_argument("--no-warehouse", action="store_true",
                        help="do not ingest the results into the warehouse")
    parser.add_argument("--db", default=None,
                        help="warehouse file (default: $HARNESS_WAREHOUSE or ./warehouse.duckdb)")


def retry_command(target, db) -> str:
    """The command that ingests ``target`` later, as printed: the running interpreter (the
    virtualenv's) by its full path, the same warehouse (``--db`` when one was given)."""
    words = [sys.executable, "-m", "warehouse", "ingest", str(target)]
    if db is not None:
        words += ["--db", str(db)]
    return shlex.join(words)


def _ingest(func, target, args, retry: str) -> None:
    from harness.core import interrupts

    try:
        report = func(target, db_path=getattr(args, "db", None))
    except ValueError:
        raise  # refused input: the caller reports it as bad input
    except Exception as exc:  # busy, schema out of date: what was written stays intact
        if interrupts.received():  # DuckDB reports a Ctrl-C as its own error
            raise KeyboardInterrupt from None
        print(f"not ingested into the warehouse ({exc}); the files are intact, "
              f"retry later with: {retry}", file=sys.stderr)
        raise SystemExit(NOT_INGESTED) from None
    print(report.message)


def ingest_run(results_dir, args) -> None:
    """Ingest ``results_dir`` unless ``--no-warehouse`` was given; prints what happened."""
    if getattr(args, "no_warehouse", False):
        return
    from warehouse import ingest_results

    _ingest(ingest_results, results_dir, args,
            retry_command(results_dir, getattr(args, "db", None)))


def ingest_claim_file(path, args) -> None:
    """Ingest a standalone claim document (certificate, agreement, ...) unless disabled."""
    if getattr(args, "no_warehouse", False):
        return
    from warehouse import ingest_document

    _ingest(ingest_document, path, args, retry_command(path, getattr(args, "db", None)))
