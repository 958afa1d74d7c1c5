"""The shell commands the dashboard's pages print when a page has nothing to show yet, one
constant per hint (pure Python: no streamlit), so that ``tests/pages/test_printed_hints.py``
runs every one of them as printed, its placeholders filled with real paths.

A hint is a tuple of command lines, run one after the other.  Words in capitals
(``ARM_DIR``, ``CONTROL_DIR``, ``RESULTS_DIR``, ``KIND:PATH``, ``PATH``) are for the
reader to fill; ``...`` means "more of the same"; ``WAREHOUSE`` is filled by the page
(:func:`filled`) with the file it reads.  Every command names the interpreter
serving the dashboard by its full path (the virtualenv's), so it works as printed without
activating anything; run it where the dashboard runs (the same working directory and
``$HARNESS_WAREHOUSE``), so the warehouse it ingests into is the one the page reads.
"""

from __future__ import annotations

import shlex
import sys

#: the interpreter serving this dashboard (the virtualenv's)
PYTHON = shlex.quote(sys.executable)

Hint = tuple[str, ...]

#: Overview and Results: paired tests of arms against a control (one Holm family), stored
COMPARISONS: Hint = (
    f"{PYTHON} -m harness intervals ARM_DIR ... --control CONTROL_DIR",
    f"{PYTHON} -m warehouse ingest ARM_DIR ... CONTROL_DIR",
)
#: Results: intervals of runs that have none stored yet
INTERVALS: Hint = (
    f"{PYTHON} -m harness intervals RESULTS_DIR ...",
    f"{PYTHON} -m warehouse ingest RESULTS_DIR ...",
)
#: Agreement: the coefficients computed on the page, kept as a claim document
AGREEMENT: Hint = (
    f"{PYTHON} -m harness agreement --emit-manifest --runs RESULTS_DIR ... > manifest.json",
    f"{PYTHON} -m harness agreement --manifest manifest.json --out agreement.json",
    f"{PYTHON} -m warehouse ingest agreement.json",
)
#: Certificates: a coverage certificate calibrated on a bench run, stored
CALIBRATE: Hint = (
    f"{PYTHON} -m harness calibrate --run RESULTS_DIR --out cert.json",
    f"{PYTHON} -m warehouse ingest cert.json",
)
#: Migration: one embedding-model migration decision (ingested as it is written)
MIGRATION: Hint = (
    f"{PYTHON} -m harness migrate --old minilm --new minilm-static-256 --corpus KIND:PATH "
    "--out results/migration-static",
)
#: Answers: the reference answerer and the floor over a synthetic corpus (ingested as written)
ANSWERS: Hint = (
    f"{PYTHON} -m harness answer --corpus synthetic:PATH --answerer reference "
    "--out results/answers-reference",
    f"{PYTHON} -m harness answer --corpus synthetic:PATH --answerer none "
    "--out results/answers-none",
    f"{PYTHON} -m warehouse ingest results/answers-reference/answers.json   "
    "# one written with --no-warehouse",
)
#: Results: the LaTeX file the page's download holds, from the command line
EXPORT_LATEX: Hint = (
    f"{PYTHON} -m warehouse export --view publishable --format latex --out table.tex",
)
#: Judge: a judging task from a run's top 10 (a pool with its texts), put on the page
JUDGE_TASK: Hint = (
    f"{PYTHON} -m harness export-run RESULTS_DIR --out run.trec",
    f"{PYTHON} -m harness pool run.trec --depth 10 --out pool.jsonl",
    f"{PYTHON} -m harness qrels task --pool pool.jsonl --corpus KIND:PATH --out judging-task",
    f"{PYTHON} -m warehouse ingest judging-task",
)
#: Judge, single-user: the labels the page wrote into its inbox (the page fills in INBOX)
JUDGE_INGEST: Hint = (f"{PYTHON} -m warehouse ingest INBOX/*",)

#: every page: the warehouse's schema is out of date (the page fills in WAREHOUSE)
MIGRATE: Hint = (f"{PYTHON} -m warehouse migrate --db WAREHOUSE",)

#: every hint above by name (the test runs each)
HINTS: dict[str, Hint] = {
    "COMPARISONS": COMPARISONS, "INTERVALS": INTERVALS, "AGREEMENT": AGREEMENT,
    "CALIBRATE": CALIBRATE, "MIGRATION": MIGRATION, "ANSWERS": ANSWERS,
    "EXPORT_LATEX": EXPORT_LATEX, "MIGRATE": MIGRATE, "JUDGE_TASK": JUDGE_TASK,
    "JUDGE_INGEST": JUDGE_INGEST,
}


def filled(hint: Hint, **paths: str) -> Hint:
    """``hint`` with the placeholders named in ``paths`` replaced by those paths,
    shell-quoted (``filled(MIGRATE, WAREHOUSE=path)``)."""
    out = []
    for line in hint:
        for name, path in paths.items():
            line = line.replace(name, shlex.quote(str(path)))
        out.append(line)
    return tuple(out)


def block(hint: Hint) -> str:
    """The hint for ``st.code``: one command per line."""
    return "\n".join(hint)


def inline(hint: Hint) -> str:
    """The hint on one line, for a caption: the commands joined by ``&&`` (each runs only
    when the one before it succeeded)."""
    return " && ".join(line.split("   #", 1)[0].rstrip() for line in hint)
