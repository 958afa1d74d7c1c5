"""Checking and storing the statistics' documents (docs/statistics.md): ``intervals``,
``comparisons`` and ``agreement``.

The handler modules (``intervals``, ``intervals_file``, ``comparisons``, ``comparisons_file``,
``agreement``) are thin: a document arrives either as a file of a results directory or as a
standalone document, and both paths end here.  Rows carry the sha256 of the canonical
document, so the same document arriving both ways is stored once.
"""

from __future__ import annotations

import re
from typing import Mapping

from harness.core.tiers import most_restrictive_tier
from harness.stats.documents import AGREEMENT_KIND, COMPARISONS_KIND, INTERVALS_KIND, SCHEMA_VERSION
from harness.stats.randomization import family_expectations
from harness.stats.randomization import verdict as holm_verdict
from warehouse.documents import _common as c

SHA256 = re.compile(r"^[0-9a-f]{64}$")
VERDICTS = ("significant", "not significant", "cannot be significant")
TEST_METHODS = ("exact", "monte-carlo")
SIGNS = ("agree", "disagree", "inert", "one-sided")
ARM_SOURCES = ("measured", "given")
#: metrics.json stores values to 10 decimals; an interval's estimate must reproduce the row
ESTIMATE_TOLERANCE = 1e-6

INTERVAL_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("run_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("measure", "string"), ("estimate", "double"),
    ("lower", "double"), ("upper", "double"), ("method", "string"), ("n", "int64"),
    ("confidence", "double"), ("seed", "int64"), ("resamples", "int64"),
    ("degenerate", "bool"), ("ingested_at", "timestamp")])

COMPARISON_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("control_run_id", "string"), ("control_name", "string"),
    ("arm_run_id", "string"), ("arm_name", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("measure", "string"), ("n", "int64"),
    ("control_mean", "double"), ("arm_mean", "double"), ("delta", "double"),
    ("delta_lower", "double"), ("delta_upper", "double"), ("confidence", "double"),
    ("interval_method", "string"), ("discordant", "int64"), ("improved", "int64"),
    ("worsened", "int64"), ("test_method", "string"), ("permutations", "int64"),
    ("p", "double"), ("p_floor", "double"), ("p_holm", "double"), ("family_size", "int32"),
    ("alpha", "double"), ("verdict", "string"), ("seed", "int64"), ("ingested_at", "timestamp")])

AGREEMENT_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("family", "string"), ("pooled", "bool"), ("measure", "string"),
    ("query_class", "string"), ("corpus", "string"), ("corpus_a", "string"),
    ("corpus_b", "string"), ("tier", "string"), ("n", "int32"), ("tau_b", "double"),
    ("tau_p", "double"), ("tau_method", "string"), ("spearman", "double"),
    ("spearman_p", "double"), ("pearson", "double"), ("pearson_p", "double"),
    ("pearson_flag", "bool"), ("agree", "int32"), ("disagree", "int32"), ("inert", "int32"),
    ("one_sided", "int32"), ("agree_share", "double"), ("winner_a", "string"),
    ("winner_a_delta", "double"), ("winner_b", "string"), ("winner_b_delta", "double"),
    ("same_winner", "bool"), ("range_a", "double"), ("range_b", "double"),
    ("range_ratio", "double"), ("caveat", "string"), ("ingested_at", "timestamp")])

AGREEMENT_ARM_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("family", "string"), ("arm", "string"), ("axis", "string"),
    ("measure", "string"), ("query_class", "string"), ("corpus", "string"),
    ("corpus_a", "string"), ("corpus_b", "string"), ("tier", "string"), ("delta_a", "double"),
    ("delta_b", "double"), ("sign", "string"), ("source", "string"), ("run_id", "string"),
    ("included", "bool")])


def _header(doc, kind: str, source) -> None:
    c.mapping(doc, source, None)
    if doc.get("kind") != kind:
        c.fail(source, "kind", f"expected {kind!r}, got {doc.get('kind')!r}")
    if doc.get("schema_version") != SCHEMA_VERSION:
        c.fail(source, "schema_version",
               f"unsupported schema version {doc.get('schema_version')!r}; "
               f"expected {SCHEMA_VERSION}")


def _run_id(value, source, where: str) -> str:
    if not isinstance(value, str) or not SHA256.match(value):
        c.fail(source, where, f"must be a run id (64 hex digits), got {value!r}")
    return value


def _unique(keys: list, source, what: str) -> None:
    seen = {}
    for i, key in enumerate(keys):
        if key in seen:
            c.fail(source, f"rows[{i}]", f"repeats rows[{seen[key]}] ({what} {key})")
        seen[key] = i


# --------------------------------------------------------------------------- intervals


def validate_intervals(doc, source) -> None:
    """An ``intervals`` document: header, run id, and each row's bounds contain its estimate."""
    _header(doc, INTERVALS_KIND, source)
    c.need(doc, ("run_id", "confidence", "rows"), source)
    _run_id(doc["run_id"], source, "run_id")
    c.number(doc["confidence"], source, "confidence", lo=0, hi=1)
    rows = c.seq(doc["rows"], source, "rows")
    for i, row in enumerate(rows):
        w = f"rows[{i}]."
        c.mapping(row, source, f"rows[{i}]")
        c.need(row, ("corpus", "tier", "query_class", "measure", "estimate", "lower", "upper",
                     "method", "confidence", "n", "seed", "resamples", "degenerate"), source, w)
        for name in ("corpus", "query_class", "measure", "method"):
            c.text(row[name], source, w + name)
        c.tier(row["tier"], source, w + "tier")
        est = c.number(row["estimate"], source, w + "estimate")
        lo = c.number(row["lower"], source, w + "lower")
        hi = c.number(row["upper"], source, w + "upper")
        if not lo - c.TOLERANCE <= est <= hi + c.TOLERANCE:
            c.fail(source, w + "estimate",
                   f"{est!r} lies outside its own interval [{lo!r}, {hi!r}]")
        c.number(row["confidence"], source, w + "confidence", lo=0, hi=1)
        c.integer(row["n"], source, w + "n", lo=1)
        c.integer(row["seed"], source, w + "seed", nullable=True)
        c.integer(row["resamples"], source, w + "resamples", nullable=True, lo=1)
        c.flag(row["degenerate"], source, w + "degenerate")
    _unique([(r["corpus"], r["query_class"], r["measure"]) for r in rows], source,
            "corpus, class, measure")


def check_intervals_against_run(doc, source, metrics: Mapping) -> None:
    """In a results directory: the document belongs to this run and reproduces its rows."""
    from harness.claims.metrics import run_id

    if doc["run_id"] != run_id(metrics):
        c.fail(source, "run_id", f"{doc['run_id']} is not this run's id ({run_id(metrics)}): "
                                 "the intervals were computed for another metrics.json")
    rows = c.run_tiers(metrics)
    for i, r in enumerate(doc["rows"]):
        w = f"rows[{i}]."
        claim = rows.get((r["corpus"], r["query_class"]))
        if claim is None:
            c.fail(source, w + "corpus", f"metrics.json has no row ({r['corpus']}, "
                                         f"{r['query_class']})")
        if r["tier"] != claim["tier"]:
            c.fail(source, w + "tier", f"tier {r['tier']!r} disagrees with metrics.json's "
                                       f"{claim['tier']!r} for ({r['corpus']}, {r['query_class']})")
        if r["n"] != claim["n"]:
            c.fail(source, w + "n", f"n = {r['n']} but metrics.json says {claim['n']}")
        if r["measure"] not in claim["metrics"]:
            c.fail(source, w + "measure", f"{r['measure']!r} is not reported in metrics.json")
        if abs(r["estimate"] - float(claim["metrics"][r["measure"]])) > ESTIMATE_TOLERANCE:
            c.fail(source, w + "estimate", f"{r['estimate']!r} differs from metrics.json's "
                                           f"{claim['metrics'][r['measure']]!r}")


def store_intervals(conn, doc) -> int:
    doc = c.canonical(doc)
    doc_id = c.content_id(doc)
    if c.already_stored(conn, "intervals", doc_id):
        return 0
    stamp = c.now()
    return c.insert(conn, "intervals", INTERVAL_COLUMNS, [{
        "document_id": doc_id, "run_id": doc["run_id"], "corpus": r["corpus"], "tier": r["tier"],
        "query_class": r["query_class"], "measure": r["measure"], "estimate": r["estimate"],
        "lower": r["lower"], "upper": r["upper"], "method": r["method"], "n": r["n"],
        "confidence": r["confidence"], "seed": r["seed"], "resamples": r["resamples"],
        "degenerate": r["degenerate"], "ingested_at": stamp} for r in doc["rows"]])


# --------------------------------------------------------------------------- comparisons


def validate_comparisons(doc, source) -> None:
    """A ``comparisons`` document: runs named, each row's delta, counts and verdict coherent
    (the verdict is recomputed from the Holm p, the family's Holm floor and alpha:
    ``harness.stats.randomization.family_expectations``)."""
    _header(doc, COMPARISONS_KIND, source)
    c.need(doc, ("control", "arms", "alpha", "seed", "confidence", "interval_method", "rows"),
           source)
    control = c.mapping(doc["control"], source, "control")
    c.need(control, ("name", "run_id"), source, "control.")
    c.text(control["name"], source, "control.name")
    _run_id(control["run_id"], source, "control.run_id")
    arms = {}
    for i, arm in enumerate(c.seq(doc["arms"], source, "arms")):
        c.mapping(arm, source, f"arms[{i}]")
        c.need(arm, ("name", "run_id"), source, f"arms[{i}].")
        name = c.text(arm["name"], source, f"arms[{i}].name")
        if name in arms:
            c.fail(source, f"arms[{i}].name", f"arm {name!r} is listed twice")
        arms[name] = _run_id(arm["run_id"], source, f"arms[{i}].run_id")
    if not arms:
        c.fail(source, "arms", "no arm compared")
    alpha = c.number(doc["alpha"], source, "alpha", lo=0, hi=1)
    c.integer(doc["seed"], source, "seed")
    c.number(doc["confidence"], source, "confidence", lo=0, hi=1)
    c.text(doc["interval_method"], source, "interval_method")
    rows = c.seq(doc["rows"], source, "rows")
    for i, row in enumerate(rows):
        w = f"rows[{i}]."
        c.mapping(row, source, f"rows[{i}]")
        c.need(row, ("corpus", "tier", "query_class", "measure", "arm", "n", "control_mean",
                     "arm_mean", "delta", "delta_lower", "delta_upper", "discordant",
                     "improved", "worsened", "method", "permutations", "p", "p_floor",
                     "p_holm", "family_size", "verdict"), source, w)
        for name in ("corpus", "query_class", "measure"):
            c.text(row[name], source, w + name)
        c.tier(row["tier"], source, w + "tier")
        if row["arm"] not in arms:
            c.fail(source, w + "arm", f"{row['arm']!r} is not among the arms {sorted(arms)}")
        c.integer(row["n"], source, w + "n", lo=1)
        ctl = c.number(row["control_mean"], source, w + "control_mean")
        arm = c.number(row["arm_mean"], source, w + "arm_mean")
        delta = c.number(row["delta"], source, w + "delta")
        if abs((arm - ctl) - delta) > c.TOLERANCE:
            c.fail(source, w + "delta", f"{delta!r} is not arm_mean - control_mean "
                                        f"({arm!r} - {ctl!r})")
        lo = c.number(row["delta_lower"], source, w + "delta_lower")
        hi = c.number(row["delta_upper"], source, w + "delta_upper")
        if not lo - c.TOLERANCE <= delta <= hi + c.TOLERANCE:
            c.fail(source, w + "delta", f"{delta!r} lies outside its own interval [{lo!r}, {hi!r}]")
        disc = c.integer(row["discordant"], source, w + "discordant")
        up = c.integer(row["improved"], source, w + "improved")
        down = c.integer(row["worsened"], source, w + "worsened")
        if up + down != disc:
            c.fail(source, w + "discordant", f"{disc} is not improved + worsened ({up} + {down})")
        c.choice(row["method"], TEST_METHODS, source, w + "method")
        c.integer(row["permutations"], source, w + "permutations", nullable=True, lo=1)
        p = c.number(row["p"], source, w + "p", lo=0, hi=1)
        c.number(row["p_floor"], source, w + "p_floor", lo=0, hi=1)
        p_holm = c.number(row["p_holm"], source, w + "p_holm", lo=0, hi=1)
        if p_holm + c.TOLERANCE < p:
            c.fail(source, w + "p_holm", f"{p_holm!r} is below the raw p {p!r}")
        c.integer(row["family_size"], source, w + "family_size", lo=1)
        c.choice(row["verdict"], VERDICTS, source, w + "verdict")
        if "p_holm_floor" in row:
            c.number(row["p_holm_floor"], source, w + "p_holm_floor", lo=0, hi=1)
    _unique([(r["corpus"], r["query_class"], r["measure"], r["arm"]) for r in rows], source,
            "corpus, class, measure, arm")
    # the verdict is read off the Holm p, so its floor is the family's (Holm) floor
    for i, (row, want) in enumerate(zip(rows, family_expectations(rows, alpha))):
        w = f"rows[{i}]."
        if row["family_size"] != want["family_size"]:
            c.fail(source, w + "family_size", f"{row['family_size']!r}, but the document holds "
                                              f"{want['family_size']} arms for this slice and "
                                              "measure")
        if "p_holm_floor" in row and abs(row["p_holm_floor"] - want["p_holm_floor"]) > c.TOLERANCE:
            c.fail(source, w + "p_holm_floor", f"{row['p_holm_floor']!r} is not the family's "
                                               f"Holm floor {want['p_holm_floor']!r}")
        expected = holm_verdict(row["p_holm"], want["p_holm_floor"], alpha)
        if row["verdict"] != expected:
            c.fail(source, w + "verdict", f"{row['verdict']!r} contradicts Holm p "
                                          f"{row['p_holm']!r}, Holm floor "
                                          f"{want['p_holm_floor']!r} (raw floor "
                                          f"{row['p_floor']!r}, family of "
                                          f"{want['family_size']}) and alpha {alpha!r} "
                                          f"({expected!r})")
    if doc.get("tier") is not None and rows:
        pooled = most_restrictive_tier([row["tier"] for row in rows])
        if doc["tier"] != pooled:
            c.fail(source, "tier", f"{doc['tier']!r}, but the rows' most restrictive tier is "
                                   f"{pooled!r}")


def check_comparisons_against_run(doc, source, metrics: Mapping) -> None:
    """In a results directory: this run is one of the runs compared, and no row claims a
    tier less restrictive than this run's row."""
    from harness.claims.metrics import run_id

    rid = run_id(metrics)
    compared = {doc["control"]["run_id"], *(a["run_id"] for a in doc["arms"])}
    if rid not in compared:
        c.fail(source, "arms", f"this run ({rid[:12]}) is not among the runs compared "
                               f"({sorted(r[:12] for r in compared)})")
    rows = c.run_tiers(metrics)
    for i, r in enumerate(doc["rows"]):
        claim = rows.get((r["corpus"], r["query_class"]))
        if claim is not None and not c.at_least_as_restrictive(r["tier"], claim["tier"]):
            c.fail(source, f"rows[{i}].tier", f"tier {r['tier']!r} is less restrictive than "
                                              f"this run's {claim['tier']!r} for "
                                              f"({r['corpus']}, {r['query_class']})")


def store_comparisons(conn, doc) -> int:
    doc = c.canonical(doc)
    doc_id = c.content_id(doc)
    if c.already_stored(conn, "comparisons", doc_id):
        return 0
    arms = {a["name"]: a["run_id"] for a in doc["arms"]}
    stamp = c.now()
    return c.insert(conn, "comparisons", COMPARISON_COLUMNS, [{
        "document_id": doc_id, "control_run_id": doc["control"]["run_id"],
        "control_name": doc["control"]["name"], "arm_run_id": arms[r["arm"]],
        "arm_name": r["arm"], "corpus": r["corpus"], "tier": r["tier"],
        "query_class": r["query_class"], "measure": r["measure"], "n": r["n"],
        "control_mean": r["control_mean"], "arm_mean": r["arm_mean"], "delta": r["delta"],
        "delta_lower": r["delta_lower"], "delta_upper": r["delta_upper"],
        "confidence": doc["confidence"], "interval_method": doc["interval_method"],
        "discordant": r["discordant"], "improved": r["improved"], "worsened": r["worsened"],
        "test_method": r["method"], "permutations": r["permutations"], "p": r["p"],
        "p_floor": r["p_floor"], "p_holm": r["p_holm"], "family_size": r["family_size"],
        "alpha": doc["alpha"], "verdict": r["verdict"], "seed": doc["seed"],
        "ingested_at": stamp} for r in doc["rows"]])


# --------------------------------------------------------------------------- agreement


def _coefficient(value, source, where: str) -> tuple[float | None, float | None, str | None]:
    block = c.mapping(value, source, where)
    c.need(block, ("value", "p"), source, where + ".")
    v = c.number(block["value"], source, where + ".value", nullable=True, lo=-1 - c.TOLERANCE,
                 hi=1 + c.TOLERANCE)
    p = c.number(block["p"], source, where + ".p", nullable=True, lo=0, hi=1)
    method = block.get("method")
    return v, p, method if isinstance(method, str) else None


def _summary(block, corpora, source, where: str) -> dict:
    """The numbers of one family (or the pooled set) as agreement columns."""
    c.mapping(block, source, where)
    c.need(block, ("n", "kendall_tau_b", "spearman", "pearson", "signs", "winners",
                   "delta_range"), source, where + ".")
    n = c.integer(block["n"], source, where + ".n")
    tau, tau_p, tau_method = _coefficient(block["kendall_tau_b"], source, where + ".kendall_tau_b")
    rho, rho_p, _ = _coefficient(block["spearman"], source, where + ".spearman")
    r, r_p, _ = _coefficient(block["pearson"], source, where + ".pearson")
    pearson_flag = c.flag(block["pearson"].get("outlier_driven"), source,
                          where + ".pearson.outlier_driven", nullable=True)
    signs = c.mapping(block["signs"], source, where + ".signs")
    c.need(signs, ("agree", "disagree", "inert", "one_sided", "agree_share"), source,
           where + ".signs.")
    counts = {k: c.integer(signs[k], source, f"{where}.signs.{k}")
              for k in ("agree", "disagree", "inert", "one_sided")}
    if sum(counts.values()) != n:
        c.fail(source, where + ".signs", f"counts {counts} do not add up to n = {n}")
    share = c.number(signs["agree_share"], source, where + ".signs.agree_share", nullable=True,
                     lo=0, hi=1)
    a, b = corpora
    out = {"n": n, "tau_b": tau, "tau_p": tau_p, "tau_method": tau_method, "spearman": rho,
           "spearman_p": rho_p, "pearson": r, "pearson_p": r_p, "pearson_flag": pearson_flag,
           **counts, "agree_share": share, "winner_a": None, "winner_a_delta": None,
           "winner_b": None, "winner_b_delta": None, "same_winner": None, "range_a": None,
           "range_b": None, "range_ratio": None}
    winners = block["winners"]
    if winners is not None:
        winners = c.mapping(winners, source, where + ".winners")
        c.need(winners, (a, b, "same"), source, where + ".winners.")
        for side, corpus in (("a", a), ("b", b)):
            won = c.mapping(winners[corpus], source, f"{where}.winners.{corpus}")
            out[f"winner_{side}"] = c.text(won.get("arm"), source, f"{where}.winners.{corpus}.arm")
            out[f"winner_{side}_delta"] = c.number(won.get("delta"), source,
                                                   f"{where}.winners.{corpus}.delta")
        out["same_winner"] = c.flag(winners["same"], source, where + ".winners.same")
    ranges = block["delta_range"]
    if ranges is not None:
        ranges = c.mapping(ranges, source, where + ".delta_range")
        c.need(ranges, (a, b, "ratio"), source, where + ".delta_range.")
        out["range_a"] = c.number(ranges[a], source, f"{where}.delta_range.{a}", lo=0)
        out["range_b"] = c.number(ranges[b], source, f"{where}.delta_range.{b}", lo=0)
        out["range_ratio"] = c.number(ranges["ratio"], source, where + ".delta_range.ratio",
                                      nullable=True, lo=0)
    return out


def validate_agreement(doc, source) -> None:
    """An ``agreement`` document: two corpora, arms with finite deltas and tiers (a typed-in
    delta is never tier A), coefficients in [-1, 1] or undefined, sign counts adding up, and
    a document tier at least as restrictive as every arm's."""
    _header(doc, AGREEMENT_KIND, source)
    c.need(doc, ("measure", "query_class", "corpora", "tier", "arms", "families", "pooled"), source)
    c.text(doc["measure"], source, "measure")
    c.text(doc["query_class"], source, "query_class")
    corpora = c.seq(doc["corpora"], source, "corpora")
    if (len(corpora) != 2 or not all(isinstance(x, str) and x for x in corpora)
            or corpora[0] == corpora[1]):
        c.fail(source, "corpora", f"must name two different corpora, got {corpora!r}")
    doc_tier = c.tier(doc["tier"], source)
    families = set()
    for i, arm in enumerate(c.seq(doc["arms"], source, "arms")):
        w = f"arms[{i}]."
        c.mapping(arm, source, f"arms[{i}]")
        c.need(arm, ("family", "name", "deltas", "sign", "source", "run_id", "tier", "included"),
               source, w)
        families.add(c.text(arm["family"], source, w + "family"))
        c.text(arm["name"], source, w + "name")
        c.text(arm.get("axis"), source, w + "axis", nullable=True)
        deltas = c.mapping(arm["deltas"], source, w + "deltas")
        for corpus in corpora:
            c.number(deltas.get(corpus), source, f"{w}deltas.{corpus}")
        c.choice(arm["sign"], SIGNS, source, w + "sign")
        kind = c.choice(arm["source"], ARM_SOURCES, source, w + "source")
        if kind == "measured":
            _run_id(arm["run_id"], source, w + "run_id")
        elif arm["run_id"] is not None:
            c.fail(source, w + "run_id", "a typed-in (given) arm names no run")
        arm_tier = c.tier(arm["tier"], source, w + "tier")
        if kind == "given" and arm_tier == "A":
            c.fail(source, w + "tier", "a typed-in delta has no traceable provenance and "
                                       "cannot be tier A")
        if not c.at_least_as_restrictive(doc_tier, arm_tier):
            c.fail(source, "tier", f"tier {doc_tier!r} is less restrictive than arm "
                                   f"{arm['name']!r} (tier {arm_tier!r})")
        c.flag(arm["included"], source, w + "included")
    _unique([(a["family"], a["name"]) for a in doc["arms"]], source, "family, arm")
    for i, fam in enumerate(c.seq(doc["families"], source, "families")):
        c.mapping(fam, source, f"families[{i}]")
        name = c.text(fam.get("family"), source, f"families[{i}].family")
        if name not in families:
            c.fail(source, f"families[{i}].family", f"{name!r} has no arm in 'arms'")
        _summary(fam, corpora, source, f"families[{i}]")
    _summary(doc["pooled"], corpora, source, "pooled")


def store_agreement(conn, doc) -> int:
    doc = c.canonical(doc)
    doc_id = c.content_id(doc)
    if c.already_stored(conn, "agreement", doc_id):
        return 0
    a, b = doc["corpora"]
    common = {"document_id": doc_id, "measure": doc["measure"],
              "query_class": doc["query_class"], "corpus": c.pooled_corpus([a, b]),
              "corpus_a": a, "corpus_b": b}
    arms = [{**common, "family": arm["family"], "arm": arm["name"], "axis": arm.get("axis"),
             "tier": arm["tier"], "delta_a": float(arm["deltas"][a]),
             "delta_b": float(arm["deltas"][b]), "sign": arm["sign"], "source": arm["source"],
             "run_id": arm["run_id"], "included": arm["included"]} for arm in doc["arms"]]
    stamp = c.now()
    rows = []
    for fam in doc["families"]:
        members = [arm["tier"] for arm in doc["arms"] if arm["family"] == fam["family"]]
        rows.append({**common, "family": fam["family"], "pooled": False,
                     "tier": most_restrictive_tier(members), "caveat": None,
                     **_summary(fam, (a, b), "<stored>", "family"), "ingested_at": stamp})
    rows.append({**common, "family": None, "pooled": True, "tier": doc["tier"],
                 "caveat": doc["pooled"].get("caveat"),
                 **_summary(doc["pooled"], (a, b), "<stored>", "pooled"), "ingested_at": stamp})
    c.insert(conn, "agreement_arms", AGREEMENT_ARM_COLUMNS, arms)
    return c.insert(conn, "agreement", AGREEMENT_COLUMNS, rows)
