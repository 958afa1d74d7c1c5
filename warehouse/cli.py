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
    p.add_argument("results_dirs", nargs="*", metavar="PATH",
                   help="results directories written by the harness, claim documents "
                        "(JSON files with a 'kind': certificate, agreement, ...), judging "
                        "tasks (harness qrels task) or labels batches (the Judge page)")
    _db(p)
    team = p.add_argument_group("team mode (docs/team.md)")
    team.add_argument("--watch", metavar="URL", default=None,
                      help="apply every complete submission in this store (s3://bucket/prefix "
                           "or a directory) exactly once, polling until stopped")
    team.add_argument("--snapshots", metavar="DIR", default=None,
                      help="with --watch: where the ingester keeps its warehouse "
                           "(DIR/warehouse.duckdb unless --db) and publishes "
                           "DIR/publishable.duckdb and DIR/internal.duckdb")
    team.add_argument("--once", action="store_true",
                      help="with --watch: apply what is pending, publish, exit (for cron)")
    team.add_argument("--trusted-keys", metavar="FILE", default=None,
                      help="PEM file of the Ed25519 public keys whose signatures make tier A "
                           "trusted; without it (with --watch) every submission is capped at "
                           "tier B. Given with PATHs, applies the same rule to them")
    team.add_argument("--poll", type=float, default=2.0, metavar="SECONDS",
                      help="with --watch: pause between looks at the store (default 2)")
    team.add_argument("--lease-ttl", type=float, default=60.0, metavar="SECONDS",
                      help="with --watch: how long the ingester lease lasts unrenewed "
                           "(default 60)")
    team.add_argument("--endpoint-url", default=None,
                      help="S3-compatible endpoint (default: the standard AWS variables)")


def cmd_watch(args) -> int:
    from harness.core.signing import load_trusted_keys
    from harness.core.store import open_store
    from warehouse.ingester import Ingester

    if args.results_dirs:
        raise ValueError("--watch takes no PATH: it applies what the store holds")
    if not args.snapshots:
        raise ValueError("--watch needs --snapshots DIR (where the snapshots are published)")
    trusted = load_trusted_keys(args.trusted_keys) if args.trusted_keys else {}
    if not trusted:
        print("note: no --trusted-keys: every submission is stored capped at tier B",
              file=sys.stderr)
    ingester = Ingester(open_store(args.watch, endpoint_url=args.endpoint_url),
                        Path(args.snapshots), trusted, db_path=args.db,
                        lease_ttl=args.lease_ttl)

    def say(line: str) -> None:
        print(line, file=sys.stderr if line.startswith("error:") else sys.stdout, flush=True)

    return ingester.run(once=args.once, poll=args.poll, say=say)


def _trusted_cap(path, keys) -> tuple[str | None, str]:
    """``(tier cap, why)`` for a local ingest given ``--trusted-keys``."""
    from harness.core.signing import verify_directory

    if not Path(path).is_dir():
        return "B", "a claim document carries no signature"
    verdict = verify_directory(path, keys)
    return (None if verdict.trusted else "B"), verdict.reason


def cmd_ingest(args) -> int:
    if args.watch:
        return cmd_watch(args)
    if not args.results_dirs:
        raise ValueError("give results directories or claim documents, or --watch URL")
    for flag in ("snapshots", "once"):
        if getattr(args, flag):
            raise ValueError(f"--{flag} goes with --watch URL")
    return cmd_ingest_paths(args)


def cmd_ingest_paths(args) -> int:
    from tqdm import tqdm

    from pathlib import Path

    from harness.core import interrupts
    from warehouse import ingest_document, judging
    from warehouse import ingest_results as ingest_local
    from warehouse.errors import IngestRefused
    from warehouse.ingest import cap_unsigned, store
    from warehouse.load import load_results

    keys = None
    if args.trusted_keys:
        from harness.core.signing import load_trusted_keys

        keys = load_trusted_keys(args.trusted_keys)

    def ingest_results(path, db_path):
        if keys is None:  # local mode: exactly the ingest it always was
            return ingest_local(path, db_path)
        cap, why = _trusted_cap(path, keys)
        # runinfo.json (latency) is outside every signature: never above B
        report = store(cap_unsigned(load_results(path)), db_path, tier_cap=cap)
        if cap is not None:
            print(f"{path}: stored with its tier capped at {cap}: {why}", file=sys.stderr)
        return report

    def ingest_one_document(path, db_path):
        cap = None if keys is None else "B"
        if cap is not None:
            print(f"{path}: stored with its tier capped at {cap}: a claim document carries "
                  "no signature", file=sys.stderr)
        return ingest_document(path, db_path, tier_cap=cap)

    status, stored = OK, 0
    bar = tqdm(args.results_dirs, desc="ingest", unit="run", file=sys.stderr,
               disable=True if len(args.results_dirs) < 2 else None)  # None: a terminal only
    for results_dir in bar:
        try:
            if judging.is_task(results_dir):
                cap, why = (None, "") if keys is None else _trusted_cap(results_dir, keys)
                if cap is not None:
                    print(f"{results_dir}: stored with its tier capped at {cap}: {why}",
                          file=sys.stderr)
                report = judging.ingest_task(results_dir, args.db, tier_cap=cap)
            elif judging.is_labels(results_dir):
                report = judging.ingest_labels(results_dir, args.db)
            else:
                ingest = ingest_one_document if Path(results_dir).is_file() else ingest_results
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
    from harness.core.arglists import CommaList
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
    p.add_argument("--measure", action="append", dest="measures", default=None,
                   help="repeatable; latex and md show DEFAULT_MEASURES when none is given")
    p.add_argument("--measures", nargs="+", action=CommaList, default=None, metavar="M",
                   dest="measures_list", help="the measures, space- or comma-separated "
                   "(adds to --measure)")
    p.add_argument("--columns", type=int, choices=(1, 2), default=1,
                   help="latex: fit the text width of a one-column article (345 pt; default) "
                        "or one column of a two-column one (229.5 pt)")
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
    from harness.stats.best import tied_with_best
    from warehouse.exports import build_export, render

    table, sidecar = _export_targets(args)  # before the warehouse is read
    measures = list(args.measures or []) + list(args.measures_list or [])
    export = build_export(args.view, args.runs, args.corpora, args.classes, measures or None,
                          control=args.control, layout=args.layout, caption=args.caption,
                          label=args.label, columns=args.columns, tie_test=tied_with_best,
                          db_path=args.db)
    if args.fmt == "latex":
        from warehouse.render import latex_render

        for warning in latex_render(export).warnings:
            print(f"note: {warning}", file=sys.stderr)
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


def cmd_submissions(args) -> int:
    from warehouse.queries.submissions import submissions

    for row in submissions(db_path=args.db):
        why = row["reason"] if row["state"] == "quarantined" else row["trust"]
        cap = f" capped at tier {row['tier_cap']}" if row["tier_cap"] else ""
        print(f"{row['digest']} {row['state']}{cap}: {why}")
    return OK


COMMANDS = {
    "ingest": ("ingest results directories or claim documents (one transaction each; a run "
               "already there is a no-op), or with --watch URL every submission in a shared "
               "store (team mode)", _ingest_args, cmd_ingest),
    "migrate": ("create the warehouse or apply pending migrations", _db, cmd_migrate),
    "export": ("export the metric table (publishable: tier-A rows only, or refuse)",
               _export_args, cmd_export),
    "info": ("schema version, runs, corpora by tier", _db, cmd_info),
    "submissions": ("team mode: every submission the ingester took from the store: applied, "
                    "capped at tier B (and why) or quarantined (and where)", _db,
                    cmd_submissions),
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
