"""The migration report: ``migration.json`` (the claim, canonical JSON, kind ``migration``),
``migration.md`` (the same numbers for a reader), ``per_query.jsonl`` (every per-query
recall the ratios were computed from) and ``runinfo.json`` (durations, embedding counts and
host; not part of the claim).  The directory is written beside its target and renamed into
place, so an interrupted run leaves the previous report whole.

The report is validated by its claim class (:class:`harness.claims.MigrationClaim`)
before it is written, as the warehouse validates it before storing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from harness.claims import MigrationClaim
from harness.claims.migration import EVAL_TIERS as TIERS
from harness.core.markdown import md_escape
from harness.core.canonical import canonical_json, canonical_line

REPORT_JSON = "migration.json"
REPORT_MD = "migration.md"
PER_QUERY = "per_query.jsonl"

# --------------------------------------------------------------------------- markdown


def _f(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _iv(block, digits: int = 3) -> str:
    if block is None:
        return "n/a"
    return (f"{block['estimate']:.{digits}f} [{block['lower']:.{digits}f}, "
            f"{block['upper']:.{digits}f}]")


def _signed(block, digits: int = 3) -> str:
    if block is None:
        return "n/a"
    return (f"{block['estimate']:+.{digits}f} [{block['lower']:+.{digits}f}, "
            f"{block['upper']:+.{digits}f}]")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _prefix(value) -> str:
    return "none" if value == "" else repr(value)


def render_markdown(doc: Mapping) -> str:
    """The report for a reader: every number of ``doc``, nothing that is not in it."""
    models, settings, tiers = doc["models"], doc["settings"], doc["tiers"]
    old, new = models["old"], models["new"]
    corpus = doc["corpora"][0]
    conf = f"{settings['confidence']:.0%}"
    out = [f"# Embedding-model migration: {md_escape(old['model_id'])} -> "
           f"{md_escape(new['model_id'])}", ""]
    head = doc["decision"]
    out += [f"**Decision ({head['tier']}): `{head['decision']}`.** {head['reason']}."
            + (f" Flags: {', '.join(head['flags'])}." if head["flags"] else ""), ""]
    if doc["pair"].get("situation"):
        out += [f"What this pair stands for: {doc['pair']['situation']}.", ""]
    out += ["## Corpus", "",
            _table(["corpus", "licence", "tier", "version", "sha256", "files", "chunks",
                    "distinct texts", "judged queries", "dropped (unjudgeable)"],
                   [[corpus["name"], corpus["licence"], corpus["tier"], corpus["version"] or "-",
                     corpus["sha256"][:16], corpus["files"], corpus["chunks"],
                     corpus["distinct_texts"],
                     "-" if corpus["queries_judged"] is None else corpus["queries_judged"],
                     "-" if corpus["queries_dropped_unjudgeable"] is None
                     else corpus["queries_dropped_unjudgeable"]]]),
            "", f"Licence evidence: {md_escape(corpus['evidence'])}", ""]
    out += ["## Models", "",
            _table(["side", "model", "kind", "source", "weights sha256", "dimension",
                    "normalised", "pooling", "query prefix", "document prefix"],
                   [[side, m["model_id"], m["kind"], m.get("source", "-"), m["weights_sha256"],
                     m["dimension"], "yes" if m["normalize"] else "no", m["pooling"],
                     _prefix(m["query_prefix"]), _prefix(m["document_prefix"])]
                    for side, m in (("OLD", old), ("NEW", new))]), ""]
    for side, m in (("OLD", old), ("NEW", new)):
        if m.get("derived_from"):
            params = ", ".join(f"{k}={v}" for k, v in sorted(m["derivation"].items()))
            out.append(f"- {side} is derived from {md_escape(m['derived_from'])} (base weights "
                       f"sha256 {md_escape(m.get('base_weights_sha256', '-'))}; "
                       f"{md_escape(params)}).")
    out += ["", "## Adapted recall retention", "",
            f"Recall@{settings['k']}; intervals: {conf} paired ratio bootstrap "
            f"({settings['method']}, {settings['resamples']} resamples, seed {settings['seed']}; "
            "query indices drawn once per resample for numerator and denominator).", ""]
    rows = []
    for name in TIERS:
        if name not in tiers:
            continue
        t = tiers[name]
        rows.append([name, t["n"], t["index_documents"], _f(t["recall"]["oracle"]),
                     _iv(t["arr"]), _iv(t["old_retention"]),
                     _iv(t["unadapted"]) if t["unadapted"] else "n/a",
                     _iv(t["gain"]) if t["gain"] else "—",
                     _signed(t["bridge_minus_old"]), t["decision"]["decision"]])
    out += [_table(["tier", "queries", "index", "oracle recall", "ARR", "OLD alone",
                    "unadapted", "upgrade gain", "ARR - OLD", "decision"], rows), ""]
    drop_in = [[name, _iv(tiers[name].get("overlap")),
                _f(tiers[name].get("overlap_min")),
                "n/a" if not tiers[name].get("ndcg") else _f(tiers[name]["ndcg"]["old"], 4),
                "n/a" if not tiers[name].get("ndcg") else _f(tiers[name]["ndcg"]["new"], 4),
                _signed(tiers[name].get("ndcg_delta"), 4)]
               for name in TIERS if name in tiers and tiers[name].get("overlap") is not None]
    if drop_in:
        out += ["## Can NEW replace OLD outright?", "",
                f"Top-{settings['k']} overlap per query (NEW in NEW's index vs OLD in OLD's) and "
                f"the paired nDCG@{settings['k']} difference NEW - OLD over the judged grades "
                f"(T1), {conf} bootstrap intervals of the means.", "",
                _table(["tier", "mean overlap", "min overlap", f"nDCG@{settings['k']} OLD",
                        f"nDCG@{settings['k']} NEW", "NEW - OLD"], drop_in), ""]
    for name in TIERS:
        if name not in tiers:
            continue
        t = tiers[name]
        d = t["decision"]
        out += [f"### {name}: `{d['decision']}` (rule `{d['rule']}`)", "",
                f"Queries: {t['queries']}; relevant: {t['relevance']}.", "",
                f"- Mean recall@{settings['k']}: oracle {_f(t['recall']['oracle'], 4)}, adapted "
                f"{_f(t['recall']['adapted'], 4)}, OLD {_f(t['recall']['old'], 4)}, unadapted "
                f"{_f(t['recall']['unadapted'], 4)}.",
                f"- {d['reason']}."]
        if t["unadapted_reason"]:
            out.append(f"- Unadapted baseline n/a: {t['unadapted_reason']}.")
        if d["flags"]:
            out.append(f"- Flags: {', '.join(d['flags'])}"
                       + (f" (intervals straddle: {', '.join(d['straddles'])})"
                          if d["straddles"] else "") + ".")
        if t.get("caveat"):
            out.append(f"- Caveat: {t['caveat']}")
        out.append("")
    adapter = doc["adapter"]
    out += ["## Adapter", "",
            f"Chosen: **{adapter['chosen']}** ({adapter['parameters']} free parameters, refitted "
            f"on {adapter['fitted_on']} document pairs disjoint from the T0 proxies). Rule: "
            f"{adapter['rule']}.", "",
            _table(["adapter", "parameters", "hyper-parameters", "validation MSE",
                    "validation retention"],
                   [[c["name"], c["parameters"],
                     ", ".join(f"{k}={v:.4g}" for k, v in sorted(c["hyper"].items())) or "-",
                     f"{c['validation_mse']:.5f}", f"{c['validation_retention']:.4f}"]
                    for c in adapter["candidates"]]), ""]
    sp = doc["split"]
    out += ["## Split", "",
            f"{sp['distinct_texts']} distinct chunk texts; T0 sample {sp['sample']} (its index), "
            f"{sp['heldout']} held-out proxies, {sp['fitting_pairs']} fitting pairs "
            f"({sp['train']} train, {sp['validation']} validation, of which "
            f"{sp['validation_proxies']} serve as validation proxies). Seed {settings['seed']}; "
            f"streams: {settings['stream']}.", ""]
    out += ["## Thresholds", "",
            _table(["threshold", "value"], [[k, f"{v:g}"] for k, v in sorted(doc["thresholds"].items())]),
            "", "## Caveats", ""]
    out += [f"- {c}" for c in doc["caveats"]]
    return "\n".join(out) + "\n"


def summary_lines(doc: Mapping) -> list[str]:
    """A few lines for the terminal."""
    lines = []
    for name in TIERS:
        t = doc["tiers"].get(name)
        if t is None:
            continue
        lines.append(f"{name}: ARR {_iv(t['arr'])}  OLD {_iv(t['old_retention'])}  unadapted "
                     f"{_iv(t['unadapted']) if t['unadapted'] else 'n/a'}  gain "
                     f"{_iv(t['gain']) if t['gain'] else '-'}"
                     + (f"  overlap {_iv(t['overlap'])}" if t.get("overlap") else "")
                     + (f"  nDCG NEW-OLD {_signed(t['ndcg_delta'], 4)}"
                        if t.get("ndcg_delta") else "")
                     + f"  -> {t['decision']['decision']}")
    head = doc["decision"]
    lines.append(f"decision ({head['tier']}): {head['decision']}")
    return lines


# --------------------------------------------------------------------------- writing


def write_report(out_dir, doc: Mapping, per_query: Sequence[Mapping], runinfo: Mapping) -> Path:
    """Validate ``doc`` and write the report directory atomically
    (:func:`harness.evaluation.results.write_directory`: staging directory + rename)."""
    from harness.evaluation.results import write_directory

    out = Path(out_dir)
    doc = MigrationClaim.from_dict(doc, str(out / REPORT_JSON)).to_dict()
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a directory")
    files = {REPORT_JSON: canonical_json(dict(doc)), REPORT_MD: render_markdown(doc),
             PER_QUERY: "".join(canonical_line(r) + "\n" for r in per_query)}
    return write_directory(out, files, runinfo)
