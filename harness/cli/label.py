"""``python -m harness label``: label a pool's pairs in the terminal, one person's queue."""

from __future__ import annotations

import sys

HELP = "label a pool's (query, document) pairs in the terminal: your queue, 0-3, skip, undo"

#: the longest document text shown (characters); the rest is cut and says so
SHOWN = 4000
KEYS = "0-3 label, s skip, u undo, q quit"


def add_arguments(p) -> None:
    p.add_argument("--pool", required=True, help="the pool file (harness pool)")
    p.add_argument("--corpus", required=True, metavar="KIND:PATH",
                   help="the corpus the documents' (and queries') texts come from")
    p.add_argument("--queries", default=None, help="query texts (JSONL or TSV) if the corpus "
                                                   "holds none")
    p.add_argument("--rater", required=True, help="your name, as the labels record it")
    p.add_argument("--out", required=True, help="your labels file (JSONL; created, or added to)")
    p.add_argument("--others", nargs="*", default=[], metavar="LABELS",
                   help="the other people's labels files, so your queue skips what is done")
    p.add_argument("--overlap", type=float, default=None,
                   help="share of pairs shown to two people for agreement (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the double-judged share")
    p.add_argument("--max-tier", choices=("A", "B"), default="B",
                   help="the most restricted corpus tier you may see (A: publishable corpora "
                        "only; an outside annotator); default B")


def run(args) -> int:
    from harness.core.atomic import write_files
    from harness.core.outputs import check_file, first_line_has
    from harness.core.tiers import rank
    from harness.judgments.judge import load_texts
    from harness.claims.labels import GRADES, Label, check_rater, labels_text, now, read_labels
    from harness.judgments.marking import segments
    from harness.judgments.pool import read_pool
    from harness.judgments.queue import OVERLAP, queue

    out = check_file(args.out, recognise=first_line_has(b'"rater"', b'"label"'), what="labels file",
                     inputs=[("--pool", args.pool), *(("--others", o) for o in args.others)])
    check_rater(args.rater, "--rater", None)
    pool = read_pool(args.pool)
    corpus, query_texts, doc_texts = load_texts(args.corpus, args.queries)
    if rank(corpus.source.tier) > rank(args.max_tier):
        raise ValueError(f"corpus {corpus.name!r} is tier {corpus.source.tier}: its documents "
                         f"are not shown to an annotator limited to tier {args.max_tier}")
    mine = read_labels([out]) if out.exists() and out.stat().st_size else []
    others = read_labels(args.others)
    overlap = OVERLAP if args.overlap is None else args.overlap
    session: list[Label] = []
    bold = sys.stdout.isatty()

    def save() -> None:
        write_files([(out, labels_text(mine + session))])

    skipped: set[tuple[str, str]] = set()
    back: tuple[str, str] | None = None  # the pair an undo returns to
    while True:
        todo, progress = queue(pool.pairs, mine + session + others, args.rater, overlap, args.seed)
        print(progress.line())
        if not todo:
            print("nothing left in your queue")
            return 0
        fresh = [p for p in todo if (p.query_id, p.doc_id) not in skipped]
        if not fresh:
            print(f"only the {len(todo)} pair(s) you skipped are left: showing them again")
            skipped.clear()
            fresh = todo
        pair = next((p for p in fresh if (p.query_id, p.doc_id) == back), fresh[0])
        back = None
        text = doc_texts.get(pair.doc_id)
        query = query_texts.get(pair.query_id)
        if text is None or query is None:
            missing = "document" if text is None else "query"
            raise ValueError(f"{missing} of pair ({pair.query_id}, {pair.doc_id}) has no text "
                             f"in {args.corpus}: is it the pool's corpus?")
        shown = "".join(f"\033[1m{piece}\033[0m" if marked and bold else
                        (f"[{piece}]" if marked else piece)
                        for piece, marked in segments(text[:SHOWN], query))
        print(f"\nquery {pair.query_id}: {query}\ndocument {pair.doc_id}:\n{shown}")
        if len(text) > SHOWN:
            print(f"... ({len(text) - SHOWN} more characters not shown)")
        print("grades: " + ", ".join(f"{k} {v}" for k, v in GRADES.items()) + f"; {KEYS}")
        answer = sys.stdin.readline()
        if not answer:
            return 0
        answer = answer.strip().lower()
        if answer in {str(k) for k in GRADES}:
            session.append(Label(pair.query_id, pair.doc_id, args.rater, now(), int(answer)))
            save()
        elif answer == "s":
            skipped.add((pair.query_id, pair.doc_id))
        elif answer == "u":
            if session:
                undone = session.pop()
                back = (undone.query_id, undone.doc_id)
                skipped.discard(back)
                save()
                print(f"undone: your label of ({undone.query_id}, {undone.doc_id})")
            else:
                print("nothing to undo in this session")
        elif answer == "q":
            print(f"wrote {out}" if session else "nothing labelled")
            return 0
        else:
            print(f"unknown answer {answer!r}: {KEYS}")
