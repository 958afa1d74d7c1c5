"""``harness bench --backend command`` flags (the timeout, retry, budget, field-map and
repeat flags are shared with ``--backend http``: :mod:`.http_options`)."""

from __future__ import annotations

from harness.retrieval.backends.http_options import shared_options

COMMAND_MODES = ("persistent", "per-query")
FLAGS = {
    "--command": ("command", "command"),
    "--command-mode": ("command_mode", "command_mode"),
    "--command-restarts": ("command_restarts", "restarts"),
}


def add_arguments(group) -> None:
    group.add_argument("--command", default=None, metavar="'PROGRAM ARGS'",
                       help="the retriever to run, e.g. 'python my_retriever.py --index x' "
                            "(JSON lines {query_id, query, k} in, one JSON answer out)")
    group.add_argument("--command-mode", choices=COMMAND_MODES, default=None,
                       help="persistent (default: one long-lived process per concurrency slot) "
                            "or per-query (one process per query)")
    group.add_argument("--command-restarts", type=int, default=None, metavar="N",
                       help="restarts of a process that died or hung before the run fails "
                            "(default 3)")


def options(args, chosen: bool) -> dict:
    given = {flag: getattr(args, dest, None) for flag, (dest, _) in FLAGS.items()}
    if not chosen:
        bad = sorted(flag for flag, value in given.items() if value is not None)
        if bad:
            raise ValueError(f"{', '.join(bad)} apply to --backend command only")
        return {}
    shared = shared_options(args, chosen)
    if not given["--command"]:
        raise ValueError("--backend command needs --command 'PROGRAM ARGS'")
    from harness.retrieval.backends.command import split_command

    split_command(given["--command"])
    restarts = given["--command-restarts"]
    if restarts is not None and restarts < 0:
        raise ValueError(f"--command-restarts must be at least 0, got {restarts}")
    out = dict(shared, command=given["--command"])
    if given["--command-mode"]:
        out["command_mode"] = given["--command-mode"]
    if restarts is not None:
        out["restarts"] = restarts
    return out
