"""``python -m warehouse ingest | migrate | export | info``."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

log = logging.getLogger(__name__)

#: exit codes
OK, FAILED, REFUSED, INTERRUPTED = 0, 1, 2, 130


def _db(p) -> None:
    p.add_argument("--db", default=None,
                   help="warehouse file (default: $HARNESS_WAREHOUSE or ./warehouse.duckdb)")


def _ingest_args(p) -> None:
    p.add_argument("results_dirs", nargs="+", metavar="PATH",
                   help="results directories written by the harness, or claim documents "
                        "(JSON files with a 'kind': certificate, agreement, ...)")
    _db(p)


def cmd_ingest(args) -> int:
    from tqdm import tqdm

    from pathlib import Path

    from harness.core import interrupts
    from warehouse import ingest_document, ingest_results
    from warehouse.errors import IngestRefused

    status, stored = OK, 0
    bar = tqdm(args.results_dirs, desc="ingest", unit="run", file=sys.stderr,
               disable=True if len(args.results_dirs) < 2 else None)  # None: a terminal only
    for results_dir in bar:
        try:
            ingest = ingest_document if Path(results_dir).is_file() else ingest_results
            report = ingest(results_dir, db_path=args.db)
        except BaseException as exc:
            if interrupts.received():  # whatever the interrupt became on its way out
                bar.close()
                earlier = (f" ({stored} given before it {'was' if stored == 1 else 'were'} "
                           "stored whole)") if stored else ""
                print(f"interrupted: nothing of {results_dir} was stored{earlier}",
                      file=sys.stderr)
                return INTERRUPTED
            if not isinstance(exc, IngestRefused):
                raise
            bar.write(f"refused {results_dir}: {exc}", file=sys.stderr)
            status = REFUSED
            continue
        stored += 1
        bar.write(report.message, file=sys.stdout)
        if interrupts.take_late():  # it came during the COMMIT, which went through
            bar.close()
            print(f"interrupted: stopped after {results_dir}, which was stored whole; nothing "
                  "after it was stored", file=sys.stderr)
            return INTERRUPTED
    return status


def cmd_migrate(args) -> int:
    from warehouse.db import resolve_path
    from warehouse.db import migrate
    from warehouse.schema import available

    done = migrate(args.db)
    path = resolve_path(args.db)
    if done:
        print(f"{path}: applied {[m.filename for m in done]}")
    else:
        print(f"{path}: up to date at version {max(m.version for m in available())}")
    return OK


def _export_args(p) -> None:
    from warehouse.exports import LAYOUTS
    from warehouse.queries import VIEWS
    from warehouse.render import RENDERERS

    p.add_argument("--view", required=True, choices=sorted(VIEWS))
    p.add_argument("--format", required=True, choices=sorted(RENDERERS), dest="fmt")
    p.add_argument("--out", required=True, help="file to write (a provenance sidecar "
                   "FILE.provenance.json is written beside it)")
    p.add_argument("--run", action="append", dest="runs", default=None,
                   help="run id, id prefix or control name (repeatable)")
    p.add_argument("--corpus", action="append", dest="corpora", default=None, help="repeatable")
    p.add_argument("--class", action="append", dest="classes", default=None, help="repeatable")
    p.add_argument("--measure", action="append", dest="measures", default=None, help="repeatable")
    p.add_argument("--control", default=None, metavar="NAME",
                   help="control run (id, id prefix or control name): adds each run's delta "
                        "against it, the delta's interval, Holm-adjusted p and mark")
    p.add_argument("--layout", choices=LAYOUTS, default="wide",
                   help="csv / parquet: wide (one row per run x corpus x class, columns per "
                        "measure) or long (one row per measure); md and latex always show "
                        "measures as columns and classes as row groups (default: wide)")
    p.add_argument("--caption", default=None, help="latex: the table's caption")
    p.add_argument("--label", default=None, help="latex: the table's label "
                   "(default: tab:results)")
    _db(p)


def _export_targets(args):
    """``(table path, sidecar path)`` after refusing any that would replace an input (the
    warehouse, its write-ahead log or lock file) or something this product did not write:
    an existing table is replaced only when its sidecar is an export's provenance."""
    from harness.core.outputs import check_file
    from warehouse.db import resolve_path

    db = resolve_path(args.db)
    inputs = [("the warehouse", db), ("the warehouse's write-ahead log", f"{db}.wal"),
              ("the warehouse's lock file", f"{db}.lock")]
    out = Path(args.out)
    sidecar = out.with_name(out.name + PROVENANCE_SUFFIX)
    table = check_file(out, recognise=lambda p: _is_provenance(
        p.with_name(p.name + PROVENANCE_SUFFIX)), what=f"{args.fmt} export", inputs=inputs)
    side = check_file(sidecar, recognise=_is_provenance, what="provenance sidecar",
                      inputs=inputs)
    return table, side


#: the provenance sidecar written beside every export file
PROVENANCE_SUFFIX = ".provenance.json"


def _is_provenance(path: Path) -> bool:
    """An export's provenance sidecar (its view, filters, runs and corpora)."""
    from warehouse.queries import VIEWS

    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > 64 << 20:
            return False
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("view") in VIEWS and \
        {"filters", "runs", "corpora", "schema_version"} <= set(doc)


def cmd_export(args) -> int:
    from harness.core.canonical import canonical_json
    from harness.core.atomic import write_files
    from warehouse.exports import build_export, render

    table, sidecar = _export_targets(args)  # before the warehouse is read
    export = build_export(args.view, args.runs, args.corpora, args.classes, args.measures,
                          control=args.control, layout=args.layout, caption=args.caption,
                          label=args.label, db_path=args.db)
    table, sidecar = _export_targets(args)  # as they are now, just before they are written
    # the last step: a Ctrl-C while the two files are put in place lets them finish
    write_files([(table, render(export, args.fmt)), (sidecar, canonical_json(export.provenance))],
                reraise=False)
    stamp = "" if args.view == "publishable" else "; internal: not for publication"
    print(f"wrote {args.out} ({len(export.table)} rows, view {args.view}{stamp}) and "
          f"{Path(args.out).with_name(Path(args.out).name + PROVENANCE_SUFFIX)}")
    return OK


def cmd_info(args) -> int:
    from warehouse.queries import health

    print(json.dumps(health(db_path=args.db), indent=2, default=str))
    return OK


COMMANDS = {
    "ingest": ("ingest results directories or claim documents (one transaction each; a run "
               "already there is a no-op)", _ingest_args, cmd_ingest),
    "migrate": ("create the warehouse or apply pending migrations", _db, cmd_migrate),
    "export": ("export the metric table (publishable: tier-A rows only, or refuse)",
               _export_args, cmd_export),
    "info": ("schema version, runs, corpora by tier", _db, cmd_info),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m warehouse",
                                     description="The DuckDB results warehouse.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (help_text, add_arguments, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(p)
        p.set_defaults(_run=run)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    from harness.core import interrupts
    from warehouse.errors import WarehouseError

    with interrupts.watching():
        try:
            code = args._run(args)
            sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
            if interrupts.take_late():  # came while finished files were put in place
                print("interrupted: what is reported above was completed and kept",
                      file=sys.stderr)
                return INTERRUPTED
            return code
        except BaseException as exc:
            if (interrupts.received() or isinstance(exc, KeyboardInterrupt)) \
                    and not isinstance(exc, SystemExit):
                print(f"interrupted: {INTERRUPTED_NOTE.get(args.command, NOTHING_KEPT)}",
                      file=sys.stderr)
                return INTERRUPTED
            if isinstance(exc, ValueError):  # refused input, unknown run, refused export
                print(f"error: {exc}", file=sys.stderr)
                return REFUSED
            if isinstance(exc, (WarehouseError, OSError)) and \
                    not isinstance(exc, BrokenPipeError):  # busy, missing, schema, disk
                print(f"error: {exc}", file=sys.stderr)
                return FAILED
            if isinstance(exc, BrokenPipeError):
                from harness.core.commands import pipe_closed

                return pipe_closed()
            raise


NOTHING_KEPT = "the open transaction was rolled back; nothing half-written was kept"
#: what an interrupted command says it left
INTERRUPTED_NOTE = {
    "ingest": "nothing was stored",
    "export": "nothing was written",
    "migrate": "the migration under way was rolled back; those applied before it stay",
}
