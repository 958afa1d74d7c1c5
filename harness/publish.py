"""Hand a written results directory to the warehouse (its public ingest entry point only)."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def add_warehouse_arguments(parser) -> None:
    parser.add_argument("--no-warehouse", action="store_true",
                        help="do not ingest the results into the warehouse")
    parser.add_argument("--db", default=None,
                        help="warehouse file (default: $HARNESS_WAREHOUSE or ./warehouse.duckdb)")


def publish(results_dir, args) -> None:
    """Ingest ``results_dir`` unless ``--no-warehouse`` was given; prints what happened."""
    if getattr(args, "no_warehouse", False):
        return
    from warehouse import ingest_results

    report = ingest_results(results_dir, db_path=getattr(args, "db", None))
    print(report.message)
