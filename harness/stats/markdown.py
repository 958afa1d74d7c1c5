"""Markdown for a reader: the statistics' documents rendered, never recomputed.

Each function takes the plain document a computing function returned (``intervals``,
``comparisons``, ``power``, ``agreement``) or a :class:`harness.stats.gate.GateResult`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from harness.claims.comparisons import is_borderline
from harness.core.markdown import md_escape


def _f(value, digits: int = 4) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def _s(value, digits: int = 4) -> str:
    if value is None:
        return "undefined"
    text = f"{value:+.{digits}f}"
    return f"{0:+.{digits}f}" if text == f"{-0.0:+.{digits}f}" else text


def _p(value) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3g}" if value >= 1e-3 else f"{value:.2e}"


def _product_text(text: str) -> str:
    """Text this product wrote (a gate's reason: numbers and fixed words), in one table cell."""
    return str(text).replace("\r", " ").replace("\n", " ").replace("|", "\\|")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def intervals_table(doc: Mapping, comparisons: Mapping | None = None) -> str:
    """One line per row x measure: estimate [lower, upper], method, n; with ``comparisons``
    (this run as the single arm) also the paired delta against the control and its Holm mark."""
    conf = f"{doc['confidence']:.0%}"
    versus = {}
    if comparisons is not None:
        versus = {(r["corpus"], r["query_class"], r["measure"]): r for r in comparisons["rows"]}
    rows = []
    for r in doc["rows"]:
        cells = [md_escape(r["corpus"]), md_escape(r["tier"]), md_escape(r["query_class"]),
                 md_escape(r["measure"]), str(r["n"]), _f(r["estimate"]),
                 f"[{_f(r['lower'])}, {_f(r['upper'])}]", md_escape(r["method"])]
        if comparisons is not None:
            c = versus.get((r["corpus"], r["query_class"], r["measure"]))
            cells.append("-" if c is None else f"{_s(c['delta'])} {_mark(c, comparisons['alpha'])} "
                         f"(Holm p {_p(c['p_holm'])})")
        rows.append(cells)
    head = ["corpus", "tier", "class", "measure", "n", "estimate", f"{conf} interval", "method"]
    if comparisons is not None:
        head.append(f"Δ vs {md_escape(comparisons['control']['name'])}")
    note = (f"\nseed {doc['seed']}, {doc['resamples']} bootstrap resamples; "
            "binary measures use the exact Clopper-Pearson interval.\n")
    if comparisons is not None:
        note += (f"`*` Holm-adjusted p <= {comparisons['alpha']}; `n.s.` not significant; `floor` cannot "
                 "be significant (the family's most extreme outcome stays above alpha); `borderline` within "
                 "Monte Carlo error of alpha (rerun with more --permutations).\n")
    return _table(head, rows) + note


def _mark(row: Mapping, alpha: float) -> str:
    """``*``, ``n.s.``, ``floor``; ``borderline`` when a Monte Carlo verdict lies within its
    sampling error of alpha (:func:`harness.claims.comparisons.is_borderline`)."""
    if row["verdict"] == "cannot be significant":
        return "floor"
    if is_borderline(row["p"], row["p_holm"], row.get("permutations"), alpha):
        return "borderline"
    if row["verdict"] == "significant":
        return "*"
    return "n.s."


def _bound(value) -> str:
    return "unbounded" if value is None else _s(value)


def comparisons_table(doc: Mapping) -> str:
    """One line per slice x measure x arm: delta, the interval of the verdict's own test at
    its Holm level (which excludes 0 exactly when the mark is ``*``), the unadjusted
    bootstrap interval, discordant pairs, p, Holm p, mark."""
    conf = f"{doc['confidence']:.0%}"
    rows = [[md_escape(r["corpus"]), md_escape(r["query_class"]), md_escape(r["measure"]),
             md_escape(r["arm"]),
             str(r["n"]), _s(r["delta"]),
             f"[{_bound(r['delta_lower'])}, {_bound(r['delta_upper'])}] "
             f"({r['delta_confidence']:.2%})",
             f"[{_s(r['unadjusted_lower'])}, {_s(r['unadjusted_upper'])}]",
             f"{r['discordant']} (+{r['improved']}/-{r['worsened']})", _p(r["p"]),
             _p(r["p_holm"]), _p(r.get("p_holm_floor", r["p_floor"])), _mark(r, doc["alpha"])]
            for r in doc["rows"]]
    head = ["corpus", "class", "measure", "arm", "n", "Δ", "interval (Holm level)",
            f"unadjusted {conf}", "discordant", "p", "Holm p", "Holm floor", "mark"]
    legend = (f"\ncontrol: {md_escape(doc['control']['name'])}.  `*` Holm-adjusted p <= {doc['alpha']}; "
              "`n.s.` not significant; `floor` cannot be significant (even the most extreme outcome "
              f"of the family leaves the Holm-adjusted p above {doc['alpha']}); `borderline` "
              "within Monte Carlo error of alpha (rerun with more --permutations).  "
              f"{doc['permutations']} "
              f"sign-flip permutations (exact enumeration up to {doc['exact_max_discordant']} discordant), "
              f"seed {doc['seed']}.  The Holm-level interval is the sign-flip test inverted at the level "
              "Holm decided the row at (its confidence in brackets): it excludes 0 exactly when the "
              f"mark is `*`.  The unadjusted interval is the paired {doc['interval_method']} bootstrap "
              "at the nominal level, not corrected for the family: it may exclude 0 beside `n.s.`.\n")
    return _table(head, rows) + legend


#: what a summary says instead of the numbers of a slice that is not tier A
WITHHELD = "withheld: tier {tier} (internal only); `--summary-internal` includes them"


def gate_summary(result, *, internal: bool = False) -> str:
    """A CI step summary for one gate verdict, naming the slice's licence tier
    (``result.extra["tier"]``; absent, it is unknown and fails closed as B).

    A step summary is often public, so for a slice that is not tier A it shows the policy,
    the threshold, the slice, its tier and the verdict, and withholds every measured number
    (query counts, mean, interval, paired test, reason) unless ``internal`` is true.
    """
    tier = result.extra.get("tier") or "B"
    badge = "✅ PASS" if result.passed else ("❌ FAIL (undecided)" if result.verdict == "undecided"
                                           else "❌ FAIL")
    lines = [f"### {badge}: gate `{result.policy}` on {md_escape(result.measure)} >= "
             f"{result.threshold:.4f}", ""]
    rows = [["slice", f"{md_escape(result.corpus)} / {md_escape(result.query_class)}"],
            ["licence tier", md_escape(tier) if tier == "A"
             else f"{md_escape(tier)} (internal only: not publishable)"]]
    if tier != "A" and not internal:
        rows.append(["numbers", WITHHELD.format(tier=tier)])
        return "\n".join(lines) + "\n" + _table(["what", "value"], rows)
    saved = result.saved
    if result.policy == "sequential" and saved is None:
        note = getattr(result, "saved_note", None) or "not applicable"
        rows.append(["queries scored", f"{result.scored} of {result.available} "
                                       f"(saving {_product_text(note)})"])
    elif result.policy == "sequential":
        share = saved / result.available if result.available else 0.0
        rows.append(["queries scored", f"{result.scored} of {result.available} "
                                       f"({saved} saved, {share:.0%})"])
    else:
        rows.append(["queries scored", str(result.scored)])
    if result.dropped:
        rows.append(["dropped (no relevant document)", str(result.dropped)])
    rows.append(["mean", _f(result.mean)])
    if result.lower is not None:
        rows.append([result.bound or "interval", f"[{_f(result.lower)}, {_f(result.upper)}]"])
    if result.regression:
        r = result.regression
        rows.append(["paired test vs control",
                     f"Δ {_s(r['delta'])} (control {_f(r['control_mean'])}), p = {_p(r['p'])}, "
                     f"{r['discordant']} discordant, floor {_p(r['p_floor'])}"])
    rows.append(["reason", _product_text(result.reason)])
    return "\n".join(lines) + "\n" + _table(["what", "value"], rows)


def power_text(doc: Mapping) -> str:
    """The power report as text (formula shown)."""
    out = [f"gold set: {doc['n']} queries" + (f", measure {doc['measure']}" if doc.get("measure") else ""),
           f"smallest attainable p   {_p(doc['smallest_attainable_p'])}   (2^(1-n): every query differs)",
           f"queries that must differ before anything can be significant at alpha {doc['alpha']}: "
           f"{doc['queries_that_must_differ']}"]
    if not doc["can_be_significant"]:
        out.append(f"no comparison on {doc['n']} queries can be significant at alpha {doc['alpha']}")
    out.append(f"formula: {doc['formula']}")
    out.append(f"multiplier z_(1-alpha/2) + z_power = {doc['z_multiplier']:.5f} "
               f"(alpha {doc['alpha']}, power {doc['power']:.0%})")
    if doc.get("sd") is None:
        out.append("no sd given (--sd, or --pilot RUN): detectable effects need the per-query sd "
                   "of paired differences")
    else:
        out.append(f"sd of paired per-query differences: {doc['sd']:.4f} ({doc['sd_source']})")
        if doc.get("minimum_detectable_effect") is not None:
            out.append(f"minimum detectable effect at {doc['power']:.0%} power: "
                       f"{doc['minimum_detectable_effect']:.4f}")
        if doc.get("effect") is not None:
            short = doc["shortfall"]
            out.append(f"effect {doc['effect']} at sd {doc['sd']:.4f} needs {doc['queries_needed']:,} "
                       f"queries by z ({doc['queries_needed_t']:,} by the exact paired t test)"
                       + (f" -> short by {short:,}" if short else " -> this gold set suffices"))
    return "\n".join(out) + "\n"


def audit_text(doc: Mapping) -> str:
    """The audit of published numbers, as a reader would check them."""
    n = doc["n"]
    k = doc["queries_that_must_differ"]
    if doc["can_be_significant"]:
        head = (f"At least {k} of {n} queries must differ before any outcome can be significant "
                f"(alpha {doc['alpha']}: a sign-flip test on k differing queries has p >= 2^(1-k)).")
    else:
        head = (f"No outcome on {n} queries can be significant at alpha {doc['alpha']}: even with every "
                f"query differing, p >= 2^(1-{n}) = {_p(doc['smallest_attainable_p'])}.")
    conf = f"{doc['confidence']:.0%}"
    rows = []
    entries = list(doc["values"]) + ([doc["baseline"]] if doc.get("baseline") else [])
    for e in entries:
        rows.append([f"{e['value']} ({e['successes']}/{n})", f"[{e['lower']:.3f}, {e['upper']:.3f}]",
                     f"{e['width']:.3f}"])
    out = head + "\n\n" + _table(["observed", f"{conf} exact interval", "width"], rows)
    for c in doc["comparisons"]:
        span = (f"{c['discordant_min']}" if c["discordant_min"] == c["discordant_max"]
                else f"{c['discordant_min']} to {c['discordant_max']}")
        pr = (_p(c["p_best"]) if c["p_best"] == c["p_worst"]
              else f"{_p(c['p_best'])} at best, {_p(c['p_worst'])} at worst")
        out += (f"\n{c['value']} vs baseline {c['baseline']}: {span} queries differ; exact p = {pr}"
                f" -> {c['verdict']}")
    return out + "\n"


def agreement_tables(doc: Mapping) -> str:
    """Per-arm deltas, coefficients per family and pooled, winners and delta ranges."""
    a, b = doc["corpora"]
    ea, eb = md_escape(a), md_escape(b)
    out = [f"## Do {ea} and {eb} agree? {md_escape(doc['measure'])}, class "
           f"{md_escape(doc['query_class'])}", ""]
    arm_rows = [[md_escape(r["family"]), md_escape(r["name"]), md_escape(r["axis"] or ""),
                 _s(r["deltas"][a]), _s(r["deltas"][b]),
                 md_escape(r["sign"]) + ("" if r["included"] else " (excluded)")]
                for r in doc["arms"]]
    out.append(_table(["family", "arm", "axis", f"Δ {ea}", f"Δ {eb}", "sign"], arm_rows))
    coef_rows = []
    for s in doc["families"] + [{"family": "pooled", **doc["pooled"]}]:
        pr = s["pearson"]
        flag = " (outlier-driven)" if pr.get("outlier_driven") else ""
        sg = s["signs"]
        coef_rows.append([md_escape(s["family"]), str(s["n"]), _s(s["kendall_tau_b"]["value"], 3),
                          _p(s["kendall_tau_b"]["p"]), _s(s["spearman"]["value"], 3), _p(s["spearman"]["p"]),
                          _s(pr["value"], 3) + flag, _p(pr["p"]),
                          f"{sg['agree']} / {sg['disagree']} / {sg['inert']} / {sg['one_sided']}"])
    out.append(_table(["set", "n", "Kendall tau-b", "p", "Spearman", "p", "Pearson", "p",
                       "agree / disagree / inert / one-sided"], coef_rows))
    win_rows = []
    for s in doc["families"]:
        w = s["winners"]
        if not w:
            continue
        win_rows.append([md_escape(s["family"]), f"{md_escape(w[a]['arm'])} ({_s(w[a]['delta'])})",
                         f"{md_escape(w[b]['arm'])} ({_s(w[b]['delta'])})",
                         "same" if w["same"] else "different",
                         _f(s["delta_range"][a]), _f(s["delta_range"][b]),
                         "undefined" if s["delta_range"]["ratio"] is None
                         else f"{s['delta_range']['ratio']:.1f}x"])
    out.append(_table(["family", f"{ea} picks", f"{eb} picks", "", f"{ea} Δ range",
                       f"{eb} Δ range", f"{eb} / {ea}"], win_rows))
    notes = [f"Pooled: {_product_text(doc['pooled']['caveat'])}.",
             _product_text(doc["pearson_note"]) + "."]
    if doc["options"]["dropped"]:
        notes.append(f"Dropped: {', '.join(map(md_escape, doc['options']['dropped']))}.")
    if doc["options"]["exclude_inert"]:
        notes.append("Inert arms excluded: "
                     f"{', '.join(map(md_escape, doc['excluded_inert'])) or 'none'}.")
    return "\n".join(out) + "\n" + "\n".join(notes) + "\n"
