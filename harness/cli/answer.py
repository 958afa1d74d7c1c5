"""``python -m harness answer``: answer aggregation queries from the transcript store and
score them on the answer (EM / partial / answered) into a results directory, then hand
answers.json to the warehouse (kind ``answers``) unless ``--no-warehouse``."""

from __future__ import annotations

import logging
import sys
import time

from harness.studies.answers.answerers import ANSWERERS
from harness.cli.ingest import add_warehouse_arguments, ingest_claim_file

log = logging.getLogger(__name__)

HELP = "answer aggregation queries from the transcript store; score EM / partial / answered"


def add_arguments(p) -> None:
    p.add_argument("--corpus", action="append", required=True, metavar="KIND:PATH",
                   help="corpus to answer (repeatable), e.g. synthetic:PATH")
    p.add_argument("--answerer", choices=sorted(ANSWERERS), default="reference",
                   help="none (declines everything: the floor), reference (the instrument's "
                        "control over the generator's frames), product (generic parser) or "
                        "opensearch (the reference's frames, R3/R4 from phrase aggregations "
                        "over an OpenSearch index); default reference")
    p.add_argument("--opensearch-url", default=None, metavar="URL",
                   help="--answerer opensearch: the node (default: $OPENSEARCH_URL)")
    p.add_argument("--store-url", default=None,
                   help="SQLAlchemy URL of the transcript store (default: transcripts.sqlite "
                        "beside the warehouse file), e.g. postgresql+psycopg://USER@HOST/DB")
    p.add_argument("--out", required=True, help="results directory to write")
    p.add_argument("--answer-count-tolerance", type=int, default=0, metavar="N",
                   help="a count within N of the gold is exact (default 0)")
    p.add_argument("--answer-set-credit", choices=("exact", "f1"), default="f1",
                   help="partial credit for a file set: f1 (default) or exact (= EM)")
    p.add_argument("--row-limit", type=int, default=None, metavar="N",
                   help="rows one answering read may return before it raises (default 100000)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_warehouse_arguments(p)


def run(args) -> int:
    started = time.perf_counter()
    from harness.studies.answers.answer import ROW_LIMIT, TruncatedResult
    from harness.studies.answers.answerers import make_answerer
    from harness.claims.answers import ANSWERS_JSON
    from harness.studies.answers.document import ANSWERS_MD
    from harness.evaluation.results import write_directory
    from harness.studies.answers.pipeline import run_answers
    from harness.studies.answers.grading import AnswerPolicy
    from harness.core.canonical import canonical_json
    from ingestion import load_corpus

    from harness.retrieval.backends.base import EXIT_BACKEND, BackendError

    from harness.evaluation.results import check_out_directory

    check_out_directory(args.out)  # before the store is filled
    policy = AnswerPolicy(args.answer_count_tolerance, args.answer_set_credit)
    progress = not args.no_progress
    options = {}
    if args.answerer == "opensearch":
        options = {"url": args.opensearch_url, "progress": progress}
    elif args.opensearch_url is not None:
        raise ValueError("--opensearch-url applies to --answerer opensearch only")
    answerer = make_answerer(args.answerer, row_limit=args.row_limit or ROW_LIMIT, **options)
    corpora = [load_corpus(spec) for spec in args.corpus]
    runinfo = {"command": "answer", "answerer": answerer.name}
    store = None
    try:
        if answerer.needs_store:
            from ingestion.transcripts import fill, open_store

            store = open_store(args.store_url, warehouse=args.db)
            runinfo["store"] = {"url": store.where, "dialect": store.dialect}
            fill_started = time.perf_counter()
            runinfo["fills"] = [fill(store, c, progress=progress).message for c in corpora]
            runinfo["fill_seconds"] = time.perf_counter() - fill_started
        answer_started = time.perf_counter()
        try:
            result = run_answers(corpora, answerer, policy, store, progress=progress)
        except TruncatedResult as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except BackendError as exc:
            print(f"error: {exc}; nothing was written", file=sys.stderr)
            return EXIT_BACKEND
        runinfo["answer_seconds"] = time.perf_counter() - answer_started
    finally:
        if store is not None:
            store.close()
        close = getattr(answerer, "close", None)
        if close is not None:
            close()
    runinfo["elapsed_seconds"] = time.perf_counter() - started
    out = write_directory(args.out, {ANSWERS_JSON: canonical_json(result.document),
                                     ANSWERS_MD: result.markdown}, runinfo)
    print(result.markdown, end="")
    print(f"\nwrote {out}")
    ingest_claim_file(out / ANSWERS_JSON, args)
    return 0
