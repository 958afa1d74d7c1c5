"""The synthetic meeting corpus: generate (deterministic from a seed), validate, load.

:func:`generate` builds the corpus in memory (:mod:`~ingestion.synthetic.generator`),
optionally selects a budget subset by gold closure (:mod:`~ingestion.synthetic.budget`),
writes it beside ``out_dir``, measures its own BM25 R@1 and near-duplicate rate
(:mod:`ingestion.composition`), runs the validator (:mod:`~ingestion.synthetic.validate`)
and only then moves it into place.  An interrupted or refused run leaves ``out_dir`` as it
was.  Layout and gold rules: :mod:`~ingestion.synthetic.spec`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_SEED = 20260812
DEFAULT_MEETINGS = 60


def _is_synthetic_dir(path: Path) -> bool:
    """Whether ``path`` holds a corpus written by this generator (its manifest says so)."""
    from ingestion.synthetic import spec

    manifest = path / spec.MANIFEST
    if not manifest.is_file():
        return False
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    return isinstance(doc, dict) and doc.get("generator") == spec.GENERATOR


def _replaceable(out: Path) -> set[str] | None:
    """What ``generate`` may replace in ``out``: the files an earlier synthetic corpus's
    manifest lists (and the manifest); refused when anything else lies in its tree."""
    from harness.core.outputs import OutputRefused, listing
    from ingestion.synthetic import spec

    if not _is_synthetic_dir(out):
        return None
    listed = set(json.loads((out / spec.MANIFEST).read_text(encoding="utf-8")).get("files") or ())
    listed.add(spec.MANIFEST)
    foreign = [p for p in sorted(out.rglob("*"))
               if p.is_symlink() or (p.is_file() and p.relative_to(out).as_posix() not in listed)]
    if foreign:
        raise OutputRefused(f"--out {out}: is a synthetic corpus, but it also holds "
                            f"{listing(foreign)}, which the generator did not write; move them "
                            "away or choose another --out")
    return {name.split("/", 1)[0] + ("/" if "/" in name else "") for name in listed}


def _write(tmp: Path, records: dict[str, dict], queries: list[dict]) -> dict[str, str]:
    from harness.core.canonical import canonical_json, canonical_line, sha256_file
    from ingestion.synthetic import spec

    (tmp / spec.MEETINGS_DIR).mkdir(parents=True)
    shas = {}
    for file_id in sorted(records):
        rel = f"{spec.MEETINGS_DIR}/{file_id}.json"
        (tmp / rel).write_text(canonical_json(records[file_id]), encoding="utf-8")
        shas[rel] = sha256_file(tmp / rel)
    (tmp / spec.QUERIES).write_text("".join(canonical_line(q) + "\n" for q in queries),
                                    encoding="utf-8")
    shas[spec.QUERIES] = sha256_file(tmp / spec.QUERIES)
    return shas


def _counts(records: dict[str, dict], queries: list[dict]) -> dict:
    per_class: dict[str, int] = {}
    for q in queries:
        per_class[q["query_class"]] = per_class.get(q["query_class"], 0) + 1
    return {
        "files": len(records),
        "turns": sum(len(r["turns"]) for r in records.values()),
        "words": sum(len(t["text"].split()) for r in records.values() for t in r["turns"]),
        "queries": len(queries),
        "queries_per_class": {k: per_class[k] for k in sorted(per_class)},
    }


def _report(manifest: dict, records: dict[str, dict], queries: list[dict]) -> dict:
    from ingestion.composition import composition
    from ingestion.loaders.synthetic import corpus_from_records

    corpus = corpus_from_records(manifest, list(records.values()), queries)
    row = composition(corpus)["groups"]["all"]
    return {
        "bm25_r_at_1": row["r_at_1"],
        "near_duplicate_rate": row["near_duplicate_rate"],
        "mean_near_duplicates": row["mean_near_duplicates"],
        "median_gold_rank": row["median_gold_rank"],
        "rank_queries": row["queries"],
        "scoring": "file-level BM25 (bm25s lucene, k1=1.5, b=0.75) over title, roster and "
                   "transcript; near-duplicate: a non-gold file scoring >= 0.9 x the gold file",
    }


def generate(seed: int, meetings: int, out_dir, *, budget: int | None = None) -> Path:
    """Write the synthetic corpus for ``seed`` into ``out_dir`` and return its path.

    Two runs with the same arguments write byte-identical files.  ``out_dir`` must not exist,
    be empty, or hold an earlier synthetic corpus (which is replaced).
    """
    from harness.core.canonical import canonical_json
    from ingestion.synthetic import budget as budget_mod
    from ingestion.synthetic import spec
    from ingestion.synthetic.generator import build, meeting_record
    from ingestion.synthetic.validate import validate

    from harness.core.atomic import replace_directory
    from harness.core.outputs import check_directory

    out = Path(out_dir)
    check_directory(out, allowed=_replaceable)  # a new, empty or earlier synthetic corpus
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)
                               or not 1 <= budget <= meetings):
        raise ValueError(f"budget must be an integer in 1..{meetings}, got {budget!r}")
    all_meetings, queries = build(seed, meetings)
    records = {m.file_id: meeting_record(m) for m in all_meetings}
    selection = None
    if budget is not None:
        selected, queries, selection = budget_mod.select(sorted(records), queries, budget)
        records = {f: records[f] for f in selected}
    manifest = {
        "generator": spec.GENERATOR, "generator_version": spec.GENERATOR_VERSION,
        "seed": seed, "meetings_requested": meetings, "budget": budget,
        "licence": spec.LICENCE, "date_source": spec.DATE_SOURCE,
        "counts": _counts(records, queries), "selection": selection,
    }
    out.parent.mkdir(parents=True, exist_ok=True)

    def build_corpus(tmp: Path) -> None:
        manifest["files"] = _write(tmp, records, queries)
        manifest["report"] = _report(manifest, records, queries)
        (tmp / spec.MANIFEST).write_text(canonical_json(manifest), encoding="utf-8")
        failures = validate(tmp)
        if failures:
            raise RuntimeError(f"generator bug: seed {seed} produced a corpus the validator "
                               f"refuses: {[(f.check, f.message) for f in failures[:5]]}")

    replace_directory(out, build_corpus, before_swap=lambda now: check_directory(
        now, allowed=_replaceable))
    log.info("synthetic corpus: %d meetings, %d queries -> %s", len(records), len(queries), out)
    return out


__all__ = ["generate", "DEFAULT_SEED", "DEFAULT_MEETINGS"]
