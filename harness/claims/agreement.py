"""The agreement claim (``harness agreement --out FILE``): do two corpora rank the arms'
changes alike (docs/statistics.md)?  One row per family and a pooled row in ``agreement``,
one row per arm in ``agreement_arms``."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, ClassVar, Mapping, Sequence

from harness.claims import base as b
from harness.core.tiers import at_least_as_restrictive, most_restrictive_tier

SIGNS = ("agree", "disagree", "inert", "one-sided")
ARM_SOURCES = ("measured", "given")
MANIFEST_KIND = "agreement-manifest"

COLUMNS: b.Columns = (
    ("document_id", "string"), ("family", "string"), ("pooled", "bool"), ("measure", "string"),
    ("query_class", "string"), ("corpus", "string"), ("corpus_a", "string"),
    ("corpus_b", "string"), ("tier", "string"), ("n", "int32"), ("tau_b", "double"),
    ("tau_p", "double"), ("tau_method", "string"), ("spearman", "double"),
    ("spearman_p", "double"), ("pearson", "double"), ("pearson_p", "double"),
    ("pearson_flag", "bool"), ("agree", "int32"), ("disagree", "int32"), ("inert", "int32"),
    ("one_sided", "int32"), ("agree_share", "double"), ("winner_a", "string"),
    ("winner_a_delta", "double"), ("winner_b", "string"), ("winner_b_delta", "double"),
    ("same_winner", "bool"), ("range_a", "double"), ("range_b", "double"),
    ("range_ratio", "double"), ("caveat", "string"), ("ingested_at", "timestamp"))

ARM_COLUMNS: b.Columns = (
    ("document_id", "string"), ("family", "string"), ("arm", "string"), ("axis", "string"),
    ("measure", "string"), ("query_class", "string"), ("corpus", "string"),
    ("corpus_a", "string"), ("corpus_b", "string"), ("tier", "string"), ("delta_a", "double"),
    ("delta_b", "double"), ("sign", "string"), ("source", "string"), ("run_id", "string"),
    ("included", "bool"))


def coefficient(value: object, source: b.SourceName,
                where: str) -> tuple[float | None, float | None, str | None]:
    block = b.mapping(value, source, where)
    b.need(block, ("value", "p"), source, where + ".")
    v = b.number(block["value"], source, where + ".value", nullable=True, lo=-1 - b.TOLERANCE,
                 hi=1 + b.TOLERANCE)
    p = b.number(block["p"], source, where + ".p", nullable=True, lo=0, hi=1)
    method = block.get("method")
    return v, p, method if isinstance(method, str) else None


def summary_columns(block: Any, corpora: Sequence[str], source: b.SourceName, where: str) -> b.JSON:
    """The numbers of one family (or the pooled set) as agreement columns."""
    b.mapping(block, source, where)
    b.need(block, ("n", "kendall_tau_b", "spearman", "pearson", "signs", "winners",
                   "delta_range"), source, where + ".")
    n = b.integer(block["n"], source, where + ".n")
    tau, tau_p, tau_method = coefficient(block["kendall_tau_b"], source, where + ".kendall_tau_b")
    rho, rho_p, _ = coefficient(block["spearman"], source, where + ".spearman")
    r, r_p, _ = coefficient(block["pearson"], source, where + ".pearson")
    pearson_flag = b.flag(block["pearson"].get("outlier_driven"), source,
                          where + ".pearson.outlier_driven", nullable=True)
    signs = b.mapping(block["signs"], source, where + ".signs")
    b.need(signs, ("agree", "disagree", "inert", "one_sided", "agree_share"), source,
           where + ".signs.")
    counts = {k: b.integer(signs[k], source, f"{where}.signs.{k}")
              for k in ("agree", "disagree", "inert", "one_sided")}
    if sum(counts.values()) != n:
        b.fail(source, where + ".signs", f"counts {counts} do not add up to n = {n}")
    share = b.number(signs["agree_share"], source, where + ".signs.agree_share", nullable=True,
                     lo=0, hi=1)
    first, second = corpora
    out = {"n": n, "tau_b": tau, "tau_p": tau_p, "tau_method": tau_method, "spearman": rho,
           "spearman_p": rho_p, "pearson": r, "pearson_p": r_p, "pearson_flag": pearson_flag,
           **counts, "agree_share": share, "winner_a": None, "winner_a_delta": None,
           "winner_b": None, "winner_b_delta": None, "same_winner": None, "range_a": None,
           "range_b": None, "range_ratio": None}
    winners = block["winners"]
    if winners is not None:
        winners = b.mapping(winners, source, where + ".winners")
        b.need(winners, (first, second, "same"), source, where + ".winners.")
        for side, corpus in (("a", first), ("b", second)):
            won = b.mapping(winners[corpus], source, f"{where}.winners.{corpus}")
            out[f"winner_{side}"] = b.text(won.get("arm"), source, f"{where}.winners.{corpus}.arm")
            out[f"winner_{side}_delta"] = b.number(won.get("delta"), source,
                                                   f"{where}.winners.{corpus}.delta")
        out["same_winner"] = b.flag(winners["same"], source, where + ".winners.same")
    ranges = block["delta_range"]
    if ranges is not None:
        ranges = b.mapping(ranges, source, where + ".delta_range")
        b.need(ranges, (first, second, "ratio"), source, where + ".delta_range.")
        out["range_a"] = b.number(ranges[first], source, f"{where}.delta_range.{first}", lo=0)
        out["range_b"] = b.number(ranges[second], source, f"{where}.delta_range.{second}", lo=0)
        out["range_ratio"] = b.number(ranges["ratio"], source, where + ".delta_range.ratio",
                                      nullable=True, lo=0)
    return out


@dataclasses.dataclass(frozen=True)
class AgreementClaim(b.Claim):
    KIND: ClassVar[str] = "agreement"
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"agreement": COLUMNS, "agreement_arms": ARM_COLUMNS}

    measure: str
    query_class: str
    corpora: list[str]
    tier: str
    arms: list[b.JSON]
    families: list[b.JSON]
    pooled: Mapping[str, Any]
    kind: str = "agreement"
    schema_version: int = 1
    delta: Any = b.ABSENT
    options: Any = b.ABSENT
    excluded_inert: Any = b.ABSENT
    axes: Any = b.ABSENT
    pearson_note: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        """Two corpora, arms with finite deltas and tiers (a typed-in delta is never tier A),
        coefficients in [-1, 1] or undefined, sign counts adding up, and a document tier at
        least as restrictive as every arm's."""
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        b.need(doc, ("measure", "query_class", "corpora", "tier", "arms", "families", "pooled"), source)
        b.text(doc["measure"], source, "measure")
        b.text(doc["query_class"], source, "query_class")
        corpora = b.seq(doc["corpora"], source, "corpora")
        if (len(corpora) != 2 or not all(isinstance(x, str) and x for x in corpora)
                or corpora[0] == corpora[1]):
            b.fail(source, "corpora", f"must name two different corpora, got {corpora!r}")
        doc_tier = b.tier(doc["tier"], source)
        families: set[str] = set()
        for i, arm in enumerate(b.seq(doc["arms"], source, "arms")):
            w = f"arms[{i}]."
            b.mapping(arm, source, f"arms[{i}]")
            b.need(arm, ("family", "name", "deltas", "sign", "source", "run_id", "tier", "included"),
                   source, w)
            families.add(b.text(arm["family"], source, w + "family"))
            b.text(arm["name"], source, w + "name")
            b.text(arm.get("axis"), source, w + "axis", nullable=True)
            deltas = b.mapping(arm["deltas"], source, w + "deltas")
            for corpus in corpora:
                b.number(deltas.get(corpus), source, f"{w}deltas.{corpus}")
            b.choice(arm["sign"], SIGNS, source, w + "sign")
            kind = b.choice(arm["source"], ARM_SOURCES, source, w + "source")
            if kind == "measured":
                b.run_id_value(arm["run_id"], source, w + "run_id")
            elif arm["run_id"] is not None:
                b.fail(source, w + "run_id", "a typed-in (given) arm names no run")
            arm_tier = b.tier(arm["tier"], source, w + "tier")
            if kind == "given" and arm_tier == "A":
                b.fail(source, w + "tier", "a typed-in delta has no traceable provenance and "
                                           "cannot be tier A")
            if not at_least_as_restrictive(doc_tier, arm_tier):
                b.fail(source, "tier", f"tier {doc_tier!r} is less restrictive than arm "
                                       f"{arm['name']!r} (tier {arm_tier!r})")
            b.flag(arm["included"], source, w + "included")
        b.unique([(a["family"], a["name"]) for a in doc["arms"]], source, "family, arm")
        for i, fam in enumerate(b.seq(doc["families"], source, "families")):
            b.mapping(fam, source, f"families[{i}]")
            name = b.text(fam.get("family"), source, f"families[{i}].family")
            if name not in families:
                b.fail(source, f"families[{i}].family", f"{name!r} has no arm in 'arms'")
            summary_columns(fam, corpora, source, f"families[{i}]")
        summary_columns(doc["pooled"], corpora, source, "pooled")

    def referenced_runs(self) -> tuple[str, ...]:
        return tuple(sorted({a["run_id"] for a in self.arms if a["run_id"]}))

    def corpus_label(self) -> str:
        return b.pooled_corpus(self.corpora)

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        a, c2 = self.corpora
        common = {"document_id": document_id, "measure": self.measure,
                  "query_class": self.query_class, "corpus": b.pooled_corpus([a, c2]),
                  "corpus_a": a, "corpus_b": c2}
        arms = [{**common, "family": arm["family"], "arm": arm["name"], "axis": arm.get("axis"),
                 "tier": arm["tier"], "delta_a": float(arm["deltas"][a]),
                 "delta_b": float(arm["deltas"][c2]), "sign": arm["sign"],
                 "source": arm["source"], "run_id": arm["run_id"], "included": arm["included"]}
                for arm in self.arms]
        rows: list[b.JSON] = []
        for fam in self.families:
            members = [arm["tier"] for arm in self.arms if arm["family"] == fam["family"]]
            rows.append({**common, "family": fam["family"], "pooled": False,
                         "tier": most_restrictive_tier(members), "caveat": None,
                         **summary_columns(fam, (a, c2), "<stored>", "family"),
                         "ingested_at": stamp})
        rows.append({**common, "family": None, "pooled": True, "tier": self.tier,
                     "caveat": self.pooled.get("caveat"),
                     **summary_columns(self.pooled, (a, c2), "<stored>", "pooled"),
                     "ingested_at": stamp})
        return {"agreement": rows, "agreement_arms": arms}
