"""A results directory's rankings, or the qrels it was judged with, as a TREC or JSONL file
other tools read (trec_eval, ranx, PyTerrier, ir_measures), with a provenance sidecar.

What is exported comes from the files the claim pins (``rankings.jsonl``, ``qrels.jsonl``),
checked against their sha256 first.  TREC files have no comment syntax that trec_eval
accepts, so what a reader must know travels in ``FILE.provenance.json`` beside the export:
the run's id and name, the corpora with their licences and tiers, the metric engine, the
relevance policy, and the flags ``harness score`` needs to reproduce the claim's numbers
from the exported pair (``--preserve-order``, ``--binary-relevance``).

Two limits are stated, never hidden: ``rankings.jsonl`` holds scores at the stored 10
decimals, so two documents whose scores differed only beyond them now tie, and a re-score
can order them differently (listed in ``reordered_on_rescore``; re-score with
``--preserve-order``); and ``harness score`` keeps the top ``--keep-rankings`` documents per
query (``retrieval.rankings_kept``), so measures past that depth can differ.  A qrels query
without any judgement (a bench query whose gold maps to no document) cannot be written in
TREC or JSONL qrels; it is counted in the sidecar.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from harness.claims.metrics import METRICS_JSON, QRELS, RANKINGS, effective_tiers
from harness.core.canonical import canonical_json, canonical_line, sha256_file, sha256_text
from harness.core.atomic import write_files
from harness.core.formats import FormatError, read_jsonl, trec_qrels_text, trec_run_text
from harness.core.records import Qrel, ScoredDoc
from harness.core.tiers import most_restrictive_tier
from harness.evaluation.results import load_claim
from harness.evaluation.engine import PRESERVE_ORDER_TIE_BREAK
from harness.evaluation.ordering import normalise_ranking

FORMATS = ("trec", "jsonl")
#: what can be exported: the file it comes from
SOURCES = {"rankings": RANKINGS, "qrels": QRELS}
SIDECAR_SUFFIX = ".provenance.json"


def sidecar_path(out) -> Path:
    out = Path(out)
    return out.with_name(out.name + SIDECAR_SUFFIX)


def _rows(results_dir: Path, what: str, claim) -> list[dict]:
    name = SOURCES[what]
    path = results_dir / name
    if not path.is_file():
        hint = (" (results directories written before qrels.jsonl was added do not hold "
                "their judgements: rerun harness score or harness bench)") if what == "qrels" else ""
        raise FormatError(path, None, None, f"no such file{hint}")
    pinned = dict(claim.files or {}).get(name)
    if pinned is None:
        raise FormatError(results_dir / METRICS_JSON, None, "files",
                          f"{name} is in the results directory but the claim does not pin it")
    if sha256_file(path) != pinned:
        raise FormatError(results_dir / METRICS_JSON, None, f"files.{name}",
                          f"{name} does not match its pinned sha256: the file was changed after "
                          "the claim was written")
    if path.stat().st_size == 0:
        return []
    return [obj for _, obj in read_jsonl(path)]


def _by_query(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(str(row["query_id"]), []).append(row)
    return out


def _reordered(lists: Mapping[str, list[dict]]) -> list[str]:
    """Queries whose stored order a re-score by score would not reproduce (ties made by
    rounding the stored scores)."""
    out = []
    for query_id, docs in lists.items():
        stored = [str(d["doc_id"]) for d in docs]
        again = [d for d, _ in normalise_ranking([(str(d["doc_id"]), float(d["score"]))
                                                  for d in docs])]
        if again != stored:
            out.append(query_id)
    return sorted(out)


def export_text(results_dir, what: str = "rankings", fmt: str = "trec", *,
                corpus: str | None = None, tag: str | None = None) -> tuple[str, dict]:
    """``(text, provenance)``: the export of ``results_dir`` and its sidecar document."""
    if what not in SOURCES:
        raise ValueError(f"unknown export {what!r}; expected one of {sorted(SOURCES)}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {list(FORMATS)}")
    results_dir = Path(results_dir)
    claim = load_claim(results_dir)
    doc = claim.to_dict()
    rows = _rows(results_dir, what, claim)
    tiers = effective_tiers(doc)
    if corpus is not None:
        if corpus not in tiers:
            raise ValueError(f"--corpus {corpus!r}: not a corpus of {results_dir / METRICS_JSON} "
                             f"(corpora: {sorted(tiers)})")
        rows = [r for r in rows if r["corpus"] == corpus]
    corpora = sorted(tiers) if corpus is None else [corpus]
    where = str(results_dir / SOURCES[what])
    lists = _by_query(rows)
    notes: list[str] = []
    preserve = doc["metric_engine"].get("tie_break") == PRESERVE_ORDER_TIE_BREAK
    binary = bool((doc.get("relevance_policy") or {}).get("binary"))
    flags = (["--preserve-order"] if preserve else []) + (["--binary-relevance"] if binary else [])
    extra: dict = {}
    if what == "rankings":
        run_tag = tag if tag is not None else claim.control_name
        if fmt == "trec":
            text = trec_run_text({q: [ScoredDoc(q, str(r["doc_id"]), float(r["score"])) for r in docs]
                                  for q, docs in lists.items()}, run_tag, where, tag_where="--tag")
        else:
            text = "".join(canonical_line({"query_id": q, "doc_id": r["doc_id"], "rank": rank,
                                           "score": float(r["score"])}) + "\n"
                           for q, docs in lists.items() for rank, r in enumerate(docs, start=1))
        kept = (doc.get("retrieval") or {}).get("rankings_kept")
        cut = sorted(q for q, docs in lists.items() if isinstance(kept, int) and len(docs) >= kept)
        reordered = [] if preserve else _reordered(lists)
        if cut:
            notes.append(f"{len(cut)} queries hold the {kept} documents harness score kept "
                         f"(--keep-rankings): measures deeper than rank {kept} can differ on "
                         "re-scoring")
        if reordered:
            notes.append(f"{len(reordered)} queries hold scores tied at the stored 10 decimals "
                         "in an order a re-score would change: re-score with --preserve-order")
        extra = {"tag": run_tag if fmt == "trec" else None, "rankings_kept": kept,
                 "queries_at_cut": len(cut), "reordered_on_rescore": reordered,
                 "order": "list order as scored (--preserve-order)" if preserve
                          else "by score, ties by (doc_type, file_id, chunk_index)"}
    else:
        if fmt == "trec":
            text = trec_qrels_text([Qrel(q, str(r["doc_id"]), int(r["relevance"]))
                                    for q, docs in lists.items() for r in docs], where)
        else:
            text = "".join(canonical_line({"query_id": q, "doc_id": r["doc_id"],
                                           "relevance": int(r["relevance"])}) + "\n"
                           for q, docs in lists.items() for r in docs)
        judged = (doc.get("judgements") or {}).get("queries_in_qrels")
        unwritten = None
        if corpus is None and isinstance(judged, int):
            unwritten = judged - len(lists)
            if unwritten:
                notes.append(f"{unwritten} qrels queries have no judged document and cannot be "
                             "written: their queries_dropped_unjudgeable count is not reproduced")
        extra = {"queries_without_judgements": unwritten}
    if not text:
        raise ValueError(f"{where}: nothing to export" + (f" for corpus {corpus!r}" if corpus else ""))
    tier = most_restrictive_tier(tiers[c] for c in corpora)
    provenance = {
        "export": what,
        "format": fmt,
        "sha256": sha256_text(text),
        "lines": text.count("\n"),
        "queries": len(lists),
        "run": {"run_id": claim.identity(), "control_name": claim.control_name},
        "corpora": [{"name": c["name"], "licence": c.get("licence"), "tier": tiers[c["name"]]}
                    for c in doc["corpora"] if c["name"] in corpora],
        "tier": tier,
        "metric_engine": {k: doc["metric_engine"].get(k)
                          for k in ("name", "version", "semantics", "tie_break")},
        "relevance_policy": doc.get("relevance_policy"),
        "score_flags": flags,
        **extra,
        "notes": notes,
    }
    return text, provenance


def write_export(results_dir, out, what: str = "rankings", fmt: str = "trec", *,
                 corpus: str | None = None, tag: str | None = None,
                 force: bool = False) -> tuple[Path, dict]:
    """Write the export to ``out`` and its sidecar beside it, each atomically; an existing
    file is refused unless ``force``.  Returns the sidecar's path and document."""
    out = Path(out)
    side = sidecar_path(out)
    for path in (out, side):
        if path.is_dir():
            raise ValueError(f"{path}: is a directory; --out names the file to write")
        if path.exists() and not force:
            raise ValueError(f"{path}: exists; refusing to overwrite it (give --force to replace it)")
    text, provenance = export_text(results_dir, what, fmt, corpus=corpus, tag=tag)
    provenance = {**provenance, "file": out.name}
    write_files([(out, text), (side, canonical_json(provenance))])
    return side, provenance
