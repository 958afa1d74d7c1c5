"""``python -m harness sweep``: a family of arms in one process, sharing the prepared corpus.

Every ``harness bench`` flag given here applies to every arm; each arm adds its own flags
(``--family fusion``: the 24 fusion arms of :data:`harness.pipeline.sweep.FUSION_FAMILY`;
``--arms FILE``: one arm per line, ``NAME FLAGS...``, ``#`` comments).  Each arm is written
to ``--out``/NAME exactly as ``harness bench`` with the shared and the arm's flags would write
it (byte-identical claim files); the corpora are prepared once and each distinct index is
opened once (:mod:`harness.pipeline.sweep`).

Exit codes as ``harness bench``: 0 written; 2 bad input (nothing run); 3 mixed embedding
space; 5 the backend failed (arms already written are kept and named).
"""

from __future__ import annotations

import argparse
import copy
import re
import shlex
import sys
from pathlib import Path

HELP = "run a family of arms in one process, preparing and indexing the corpora once"

#: flags an arm may not set for itself: they are the sweep's
_SWEEP_ONLY = ("--corpus", "--out", "--control-name", "--compare", "--gate")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def add_arguments(p) -> None:
    from harness.cli.bench import add_arguments as bench_arguments
    from harness.pipeline.sweep import FAMILIES

    g = p.add_argument_group("the family")
    g.add_argument("--family", choices=sorted(FAMILIES), default=None,
                   help="a built-in family (fusion: 8 RRF rank constants, 7 normalisation x "
                        "combination pairs, 9 weighted means)")
    g.add_argument("--arms", default=None, metavar="FILE",
                   help="one arm per line: NAME then its bench flags (e.g. 'rrf-30 --mode "
                        "hybrid --fusion rrf --rank-constant 30'); # starts a comment")
    g.add_argument("--no-share-legs", action="store_true",
                   help="search every arm's legs itself (so each arm's latency samples time "
                        "its legs too); default: arms asking the legs for the same candidates "
                        "share them")
    bench_arguments(p)


def _arm_parser() -> argparse.ArgumentParser:
    from harness.cli.bench import add_arguments as bench_arguments

    parser = argparse.ArgumentParser(prog="arm", add_help=False, exit_on_error=False)
    bench_arguments(parser)
    for action in parser._actions:
        action.required = False
    return parser


def read_arms(path) -> dict[str, tuple[str, ...]]:
    """``{name: flags}`` from an arms file; errors name the file and line."""
    arms: dict[str, tuple[str, ...]] = {}
    text = Path(path).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        if not tokens:
            continue
        name, flags = tokens[0], tuple(tokens[1:])
        if not _NAME.match(name):
            raise ValueError(f"{path}:{number}: arm name {name!r} must be letters, digits, "
                             "'.', '_', '+' or '-' (it names a directory)")
        if name in arms:
            raise ValueError(f"{path}:{number}: arm {name!r} is named twice")
        arms[name] = flags
    if not arms:
        raise ValueError(f"{path}: no arms (one per line: NAME FLAGS...)")
    return arms


def arm_configs(args, arms: dict[str, tuple[str, ...]]) -> list:
    """Each arm's :class:`ArmConfig`: the shared flags with the arm's on top."""
    from harness.pipeline.config import from_args

    parser = _arm_parser()
    configs = []
    for name, flags in arms.items():
        given = sorted({f.split("=")[0] for f in flags} & set(_SWEEP_ONLY))
        if given:
            raise ValueError(f"arm {name!r}: {', '.join(given)} belong to the sweep, not an arm")
        ns = copy.deepcopy(args)
        try:
            ns, rest = parser.parse_known_args(list(flags), namespace=ns)
        except argparse.ArgumentError as exc:
            raise ValueError(f"arm {name!r}: {exc}") from None
        if rest:
            raise ValueError(f"arm {name!r}: unknown flags {' '.join(rest)}")
        ns.out = str(Path(args.out) / name)
        ns.control_name = name
        try:
            configs.append((name, from_args(ns)))
        except ValueError as exc:
            raise ValueError(f"arm {name!r}: {exc}") from None
    return configs


def _row_summary(metrics: dict, measure: str) -> str:
    parts = []
    for row in metrics["rows"]:
        if row["query_class"] == "all" and measure in row["metrics"]:
            parts.append(f"{row['corpus']} {row['metrics'][measure]:.4f}")
    return ", ".join(parts)


def run(args) -> int:
    from harness.cli.ingest import ingest_run
    from harness.evaluation.results import check_out_directory
    from harness.retrieval.backends import EXIT_BACKEND, BackendError
    from harness.pipeline.sweep import FAMILIES, run_sweep
    from harness.retrieval.embeddings.provenance import EXIT_MIXED_EMBEDDINGS, MixedEmbeddingSpace

    if (args.family is None) == (args.arms is None):
        raise ValueError("give exactly one of --family NAME or --arms FILE")
    if not args.out:
        raise ValueError("--out is required (the directory holding one results directory "
                         "per arm)")
    for flag, value in (("--gate", args.gate), ("--control-name", args.control_name),
                        ("--compare", args.compare)):
        if value:
            raise ValueError(f"{flag} applies to harness bench, not to a sweep")
    arms = FAMILIES[args.family]() if args.family else read_arms(args.arms)
    configs = arm_configs(args, arms)
    for _, cfg in configs:
        check_out_directory(cfg.out)  # before anything is prepared
    measure = "nDCG@10" if "nDCG@10" in configs[0][1].measures else configs[0][1].measures[0]
    written = []

    def report(result) -> None:
        shared = []
        if result.shared_index:
            shared.append("index shared")
        if result.legs_from:
            shared.append(f"legs from {result.legs_from}")
        print(f"{result.name}: {measure} {_row_summary(result.outcome.metrics, measure)}  "
              f"({result.seconds:.2f} s{'; ' + ', '.join(shared) if shared else ''})",
              flush=True)
        written.append(result.outcome.out)
        ingest_run(result.outcome.out, args)

    try:
        results = run_sweep(configs, share_legs=not args.no_share_legs, on_arm=report)
    except MixedEmbeddingSpace as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_MIXED_EMBEDDINGS
    except BackendError as exc:
        kept = f"; kept {len(written)} arm(s) already written" if written else ""
        print(f"error: {exc}; nothing more was written{kept}", file=sys.stderr)
        return EXIT_BACKEND
    print(f"\nwrote {len(results)} arms under {args.out}")
    return 0
