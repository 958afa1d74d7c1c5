"""What ``harness bench`` prints when a run is written: a few lines for a reader, not the
per-arm table (that is ``metrics.md``, whose path is printed).  Numbers are rounded here:
4 decimals for a measure (as in metrics.md), 3 significant digits for a duration."""

from __future__ import annotations

from pathlib import Path

#: the measures a summary line shows, when the run has them
HEADLINE = ("nDCG@10", "R@10", "MRR")


def ms(value) -> str:
    """A duration in milliseconds for a reader: 3 significant digits (``0.425``, ``16.0``,
    ``1240``), never a float's full repr."""
    if value is None:
        return "n/a"
    value = float(value)
    if value == 0:
        return "0"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def measure(value) -> str:
    return "n/a" if value is None else f"{float(value):.4f}"


def bench_summary(out: Path, metrics: dict, runinfo: dict) -> list[str]:
    """The lines printed after a bench run: per corpus its ``all`` row's headline measures,
    the embedding and latency counts, and where the full table is."""
    lines = [f"{metrics.get('control_name')}: wrote {out}"]
    for row in metrics.get("rows", []):
        if row.get("query_class") != "all":
            continue
        shown = [f"{m} {measure(row['metrics'][m])}" for m in HEADLINE if m in row["metrics"]]
        lines.append(f"  {row['corpus']} (tier {row['tier']}), {row['n']} queries: "
                     + ", ".join(shown))
    emb = runinfo.get("embedding") or {}
    lat = runinfo.get("retrieval_latency_ms") or {}
    lines.append(f"  texts embedded {emb.get('texts_embedded', 0)}, from cache "
                 f"{emb.get('texts_from_cache', 0)}; retrieval p50 {ms(lat.get('p50'))} ms, "
                 f"p95 {ms(lat.get('p95'))} ms at concurrency {lat.get('concurrency')}")
    lines.append(f"  every measure and query class: {Path(out) / 'metrics.md'}")
    return lines
