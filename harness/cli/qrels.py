"""``python -m harness qrels``: versions of a team's own judgements, their agreement and
their TREC export."""

from __future__ import annotations

from pathlib import Path

HELP = "version a team's labels into qrels, measure rater agreement, export TREC qrels"


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    v = sub.add_parser("version", help="snapshot labels into an immutable, digested qrels "
                                       "version (qrels-<12 hex>.json)")
    v.add_argument("--labels", nargs="+", required=True, metavar="LABELS",
                   help="labels files (JSONL: query_id, doc_id, label 0-3, rater, at)")
    v.add_argument("--pool", default=None, help="the pool file the pairs came from (its depth, "
                                                "runs and sample are recorded)")
    v.add_argument("--parent", default=None, metavar="VERSION",
                   help="a version these labels extend: its labels are kept, and a rater's "
                        "later label of a pair replaces theirs")
    v.add_argument("--corpus-name", default=None, help="the corpus the pairs are from")
    from harness.cli import add_licence_arguments

    add_licence_arguments(v, when="the corpus's ", tier_note="; the judgements inherit it")
    v.add_argument("--out", required=True, metavar="DIR", help="directory to write the version to")
    e = sub.add_parser("export", help="write a version's judgements as TREC qrels")
    e.add_argument("version", metavar="VERSION", help="a qrels-<12 hex>.json file")
    e.add_argument("--out", required=True, help="TREC qrels file to write")
    a = sub.add_parser("agreement", help="Cohen's / Fleiss' kappa among raters, with intervals")
    a.add_argument("--labels", nargs="+", default=None, metavar="LABELS", help="labels files")
    a.add_argument("--version", default=None, metavar="VERSION",
                   help="a qrels version (its recorded labels)")
    t = sub.add_parser("task", help="a judging task for the dashboard's Judge page: a pool with "
                                    "its queries' and documents' texts (DIR/task.json)")
    t.add_argument("--pool", required=True, help="the pool file (harness pool)")
    t.add_argument("--corpus", required=True, metavar="KIND:PATH",
                   help="the corpus the documents' (and queries') texts come from")
    t.add_argument("--queries", default=None,
                   help="query texts (JSONL or TSV) when the corpus holds none")
    t.add_argument("--name", default=None, help="the task's name on the page (default: the "
                                                "corpus's name and the pool depth)")
    t.add_argument("--overlap", type=float, default=None,
                   help="share of pairs shown to two people for agreement (default 0.2)")
    t.add_argument("--seed", type=int, default=0, help="seed of the double-judged share")
    t.add_argument("--out", required=True, metavar="DIR",
                   help="directory to write task.json to (ingest or submit it)")
    s = sub.add_parser("estimate", help="nDCG@10 of a run from the hand-labelled sample and the "
                                        "MiniLM judge, by prediction-powered inference")
    s.add_argument("--run", required=True, help="the run (TREC or .jsonl), pooled in --pool")
    s.add_argument("--pool", required=True,
                   help="the pool, with a hand-labelling sample (harness pool --sample-queries)")
    s.add_argument("--version", required=True, metavar="VERSION",
                   help="the qrels version holding the sample's hand labels")
    s.add_argument("--corpus", required=True, metavar="KIND:PATH",
                   help="the corpus the documents' (and queries') texts come from")
    s.add_argument("--queries", default=None,
                   help="query texts (JSONL or TSV) when the corpus holds none")
    s.add_argument("--alpha", type=float, default=0.05, help="1 - interval level (default 0.05)")
    s.add_argument("--judge-url", default=None, metavar="URL",
                   help="a team's own judge: POST {query_id, query, doc_id, document} per pair, "
                        "answer {score} (default: the packaged MiniLM)")
    s.add_argument("--judge-header", action="append", default=[], metavar="'Name: value'",
                   help="request header for --judge-url (repeatable; a value env:VAR is read "
                        "from the environment and never recorded)")
    s.add_argument("--judge-timeout", type=float, default=30.0,
                   help="seconds per --judge-url request (default 30)")
    s.add_argument("--judge-max-bytes", type=int, default=1 << 16,
                   help="largest --judge-url answer accepted (default 65536)")
    s.add_argument("--judge-licence", default="unknown",
                   help="licence of the --judge-url judge's model (SPDX); not publishable or "
                        "unknown (the default) caps the estimate at tier B")
    s.add_argument("--cache-dir", default=None, help="embedding cache directory")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--out", default=None, help="write the estimate as JSON here")


def run(args) -> int:
    return {"version": _version, "export": _export, "agreement": _agreement,
            "estimate": _estimate, "task": _task}[args.action](args)


def _task(args) -> int:
    import sys

    from harness.claims.judging import TASK_FILE, TaskPair, parse_task, task_document
    from harness.core.atomic import write_files
    from harness.core.canonical import canonical_json, sha256_file
    from harness.core.signing import sign_texts
    from harness.judgments.judge import load_texts
    from harness.judgments.pool import read_pool
    from harness.judgments.queue import OVERLAP, double_judged

    overlap = OVERLAP if args.overlap is None else args.overlap
    double_judged("q", "d", overlap)  # refuses an overlap outside [0, 1]
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a directory")
    pool = read_pool(args.pool)
    corpus, query_texts, doc_texts = load_texts(args.corpus, args.queries)
    for pair in pool.pairs:
        if pair.doc_id not in doc_texts or pair.query_id not in query_texts:
            missing = "document" if pair.doc_id not in doc_texts else "query"
            raise ValueError(f"{args.pool}: the {missing} of pair ({pair.query_id}, "
                             f"{pair.doc_id}) has no text in {args.corpus}: is it the pool's "
                             "corpus?" + (" (query texts: --queries)" if missing == "query"
                                          else ""))
    src = corpus.source
    tier = src.tier
    if args.queries and tier == "A":  # texts from a file whose licence nothing records
        tier = "B"
        print(f"tier B: the query texts of --queries {args.queries} carry no licence, so the "
              "task is internal only", file=sys.stderr)
    record = {"name": corpus.name, "licence": src.licence, "tier": tier,
              "version": src.version, "sha256": src.sha256,
              "registry_source": src.registry_source, "evidence": src.evidence}
    header = pool.header()
    doc = task_document(
        args.name or f"{corpus.name} depth {pool.depth}", record,
        {"sha256": sha256_file(args.pool), "depth": pool.depth, "runs": header["runs"],
         "sample": header["sample"]},
        [TaskPair(p.query_id, p.doc_id, p.sampled) for p in pool.pairs],
        query_texts, doc_texts, overlap, args.seed)
    target = out / TASK_FILE
    task = parse_task(doc, target)
    text = canonical_json(doc)
    if target.exists() and target.read_text(encoding="utf-8") != text:
        raise ValueError(f"{target}: exists and holds another task; choose a new --out")
    out.mkdir(parents=True, exist_ok=True)
    texts = {TASK_FILE: text}
    texts.update(sign_texts(texts))  # signature.json, when $HARNESS_SIGNING_KEY names a key
    write_files([(out / name, data) for name, data in texts.items()])
    print(f"judging task {task.name!r} ({task.task_id[:12]}): {len(task.pairs)} pairs over "
          f"{len(task.queries)} queries, tier {task.tier}; wrote {target}")
    print(f"put it on the Judge page: python -m warehouse ingest {out}   "
          f"(team mode: harness submit {out} --to URL)")
    return 0


def _version(args) -> int:
    from harness.core.canonical import sha256_file
    from harness.core.tiers import declared_tier
    from harness.claims.labels import read_labels
    from harness.judgments.pool import read_pool
    from harness.judgments.versions import build_version, read_version, write_version

    tier, _ = declared_tier(args.licence, args.tier, args.corpus_name)
    labels = read_labels(args.labels)
    pool = read_pool(args.pool) if args.pool else None
    if pool is not None:  # the new labels must be of this pool's pairs (a parent's may not)
        pooled = {(p.query_id, p.doc_id) for p in pool.pairs}
        strays = sorted({(i.query_id, i.doc_id) for i in labels} - pooled)
        if strays:
            raise ValueError(f"{len(strays)} labelled pair(s) are not in the pool {args.pool}, "
                             f"e.g. {strays[0]}: label pairs from this pool, or leave --pool out")
    parent = None
    if args.parent:
        held = read_version(args.parent)
        parent = held.name
        labels = held.labels() + labels
    version = build_version(labels, pool=pool,
                            pool_sha256=sha256_file(args.pool) if args.pool else None,
                            corpus=args.corpus_name, tier=tier, parent=parent)
    out = write_version(version, args.out)
    doc = version.content
    print(f"{version.name}: {len(doc['judgements'])} judged pairs over "
          f"{len({r['query_id'] for r in doc['judgements']})} queries, {len(doc['labels'])} "
          f"labels by {len(doc['raters'])} rater(s), tier {tier}")
    from harness.judgments.agreement import agreement

    for line in agreement(labels).lines():
        print(line)
    print(f"wrote {out}")
    print(f"score a run on it: harness score --qrels {out} --run RUN --out DIR")
    return 0


def _export(args) -> int:
    from harness.core.outputs import write_file
    from harness.judgments.versions import read_version

    version = read_version(args.version)
    write_file(args.out, version.trec(), recognise=_is_trec_qrels, what="TREC qrels file",
               inputs=[("VERSION", args.version)])
    print(f"wrote {args.out}: {len(version.content['judgements'])} judgements of "
          f"{version.name} (tier {version.content['tier']})")
    return 0


def _is_trec_qrels(path: Path) -> bool:
    """A file this command could have written: every line ``query 0 doc int``."""
    try:
        with path.open(encoding="utf-8") as handle:
            lines = handle.read(1 << 20).splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    for line in lines[:1000]:
        fields = line.split()
        if len(fields) != 4 or fields[1] != "0" or not fields[3].lstrip("-").isdigit():
            return False
    return bool(lines)


def _agreement(args) -> int:
    from harness.judgments.agreement import agreement
    from harness.claims.labels import read_labels
    from harness.judgments.versions import read_version

    if (args.labels is None) == (args.version is None):
        raise ValueError("give --labels FILE... or --version VERSION (one of them)")
    if args.version:
        labels = read_version(args.version).labels()
    else:
        labels = read_labels(args.labels)
    for line in agreement(labels).lines():
        print(line)
    return 0


def _estimate(args) -> int:
    from harness.core.canonical import canonical_json, sha256_file
    from harness.core.formats import read_run_columns
    from harness.core.outputs import check_file, is_document, write_file
    from harness.core.tiers import most_restrictive_tier
    from harness.evaluation.judged import top_ids
    from harness.evaluation.ordering import normalise_ranking
    from harness.judgments.estimate import DEPTH, estimate_ndcg
    from harness.judgments.judge import (calibrated_grades, cosine_scores, load_texts,
                                         packaged_judge)
    from harness.judgments.pool import read_pool
    from harness.judgments.versions import read_version

    if not 0 < args.alpha < 1:
        raise ValueError(f"--alpha must lie in (0, 1), got {args.alpha}")
    recognise = is_document("judged-estimate")
    inputs = [("--run", args.run), ("--pool", args.pool), ("--version", args.version)]
    if args.out:  # refused before any judging, not after it
        check_file(args.out, recognise=recognise, what="judged estimate", inputs=inputs)
    pool = read_pool(args.pool)
    if not pool.sample:
        raise ValueError(f"{args.pool} has no hand-labelling sample: pool again with "
                         "--sample-queries N (the estimate needs queries drawn at random)")
    if pool.depth < DEPTH:
        raise ValueError(f"{args.pool} pools depth {pool.depth}: nDCG@{DEPTH} needs depth "
                         f"{DEPTH} or more")
    run_sha = sha256_file(args.run)
    if run_sha not in {sha for _, sha in pool.runs}:
        raise ValueError(f"--run {args.run} is not one of the pool's runs (by sha256): pool it "
                         "first, so every document it ranks is judged")
    version = read_version(args.version)
    corpus, query_texts, doc_texts = load_texts(args.corpus, args.queries)
    run_docs = read_run_columns(args.run)
    tops = {q: top_ids(normalise_ranking(d, query_id=q))[:DEPTH] for q, d in run_docs.items()}
    pairs = [(p.query_id, p.doc_id) for p in pool.pairs]
    for query_id, doc_id in pairs:
        if query_id not in query_texts or doc_id not in doc_texts:
            missing = "query" if query_id not in query_texts else "document"
            raise ValueError(f"the {missing} of pooled pair ({query_id}, {doc_id}) has no text "
                             f"in {args.corpus}" + (" or --queries" if missing == "query" else ""))
    if args.judge_url:
        from harness.core.tiers import tier_for_licence
        from harness.judgments.http_judge import http_scores

        scores = http_scores(args.judge_url, query_texts, doc_texts, pairs,
                             headers=args.judge_header, timeout=args.judge_timeout,
                             max_bytes=args.judge_max_bytes, licence=args.judge_licence,
                             tier_of=tier_for_licence,
                             progress=None if args.no_progress else _progress())
        provenance = scores.provenance
    else:
        encoder, provenance = packaged_judge(args.cache_dir, progress=not args.no_progress)
        scores = cosine_scores(encoder, query_texts, doc_texts, pairs, provenance=provenance)
    sample = pool.sample["queries"]
    hand = version.judgements
    grades = calibrated_grades(scores.scores, hand, sample, seed=pool.sample["seed"])
    hand_sample = {q: hand.get(q, {}) for q in sample}
    result = estimate_ndcg(tops, pool.queries, sample, hand_sample, grades, alpha=args.alpha)
    tier = most_restrictive_tier([version.content["tier"], corpus.source.tier,
                                  provenance["tier"]])
    for line in result.lines():
        print(line)
    print(f"judge: {provenance['model']} ({provenance['licence']}), {provenance['score']}; "
          f"tier {tier}")
    if args.out:
        doc = {"kind": "judged-estimate", "schema": 1, "tier": tier, "run_sha256": run_sha,
               "pool_sha256": sha256_file(args.pool), "qrels_version": version.name,
               "corpus": {"name": corpus.name, "tier": corpus.source.tier,
                          "sha256": corpus.source.sha256},
               "judge": provenance, **result.to_dict()}
        write_file(args.out, canonical_json(doc), recognise=recognise, what="judged estimate",
                   inputs=inputs)
        print(f"wrote {args.out}")
    return 0


def _progress():
    """A progress line on stderr: at the first pair, then at most once a second, and at the end."""
    import sys
    import time

    from harness.retrieval.embeddings.progress import duration

    started = time.monotonic()
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done not in (1, total) and now - last[0] < 1.0:
            return
        last[0] = now
        rate = done / max(now - started, 1e-9)
        left = (total - done) / rate if rate > 0 else float("inf")
        print(f"judged {done}/{total} pairs, {rate:.1f}/s, about {duration(left)} left",
              file=sys.stderr, flush=True)
    return show
