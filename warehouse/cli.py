"""``python -m warehouse ingest | migrate | export | info``."""

from __future__ import annotations

import argparse
import json
import logging
import os
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

    from warehouse import ingest_document, ingest_results
    from warehouse.errors import IngestRefused

    status = OK
    bar = tqdm(args.results_dirs, desc="ingest", unit="run", file=sys.stderr,
               disable=len(args.results_dirs) < 2)
    for results_dir in bar:
        try:
            ingest = ingest_document if Path(results_dir).is_file() else ingest_results
            report = ingest(results_dir, db_path=args.db)
        except IngestRefused as exc:
            bar.write(f"refused {results_dir}: {exc}", file=sys.stderr)
            status = REFUSED
            continue
        bar.write(report.message, file=sys.stdout)
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
    _db(p)


def _write_atomic(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, path)


def cmd_export(args) -> int:
    from harness.core.canonical import canonical_json
    from warehouse.exports import build_export, render

    export = build_export(args.view, args.runs, args.corpora, args.classes, args.measures,
                          db_path=args.db)
    out = Path(args.out)
    _write_atomic(out, render(export, args.fmt))
    sidecar = out.with_name(out.name + ".provenance.json")
    _write_atomic(sidecar, canonical_json(export.provenance))
    print(f"wrote {out} ({len(export.table)} rows, view {args.view}) and {sidecar}")
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
    from warehouse.errors import WarehouseError

    try:
        code = args._run(args)
        sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
        return code
    except ValueError as exc:  # refused input, unknown run, refused export
        print(f"error: {exc}", file=sys.stderr)
        return REFUSED
    except WarehouseError as exc:  # busy, missing, schema out of date
        print(f"error: {exc}", file=sys.stderr)
        return FAILED
    except BrokenPipeError:
        from harness.core.commands import pipe_closed

        return pipe_closed()
    except KeyboardInterrupt:
        print("interrupted: the open transaction was rolled back; nothing half-written was kept",
              file=sys.stderr)
        return INTERRUPTED
