"""answers.json (the claim, canonical JSON) and answers.md (the same tables for a reader).

answers.json is a standalone document of kind ``"answers"``, defined and validated by
:class:`harness.claims.AnswersClaim` (its ``tier`` is the most restrictive of the corpora, its
``corpus`` the pooled name; its layout is documented there).

Nothing in it depends on the database the store lives in or on timing, so two runs on
unchanged inputs, from SQLite or from PostgreSQL, write the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.claims.answers import KIND, SCHEMA_VERSION
from harness.core.tiers import most_restrictive_tier
from harness.studies.answers.grading import SCORED_ON, AnswerPolicy
from harness.core.markdown import md_escape

ANSWERS_MD = "answers.md"

MEASURE_TEXT = {
    "EM": "exact match under the policy (the gate)",
    "partial": "diagnostic partial credit under the policy; never a substitute for EM",
    "answered": "share of the gold queries the answerer attempted",
}


def corpus_block(corpus, aggregation_queries: int) -> dict:
    """A corpus's provenance as listed in answers.json (like metrics.json's ``corpora[]``)."""
    src = corpus.source
    return {"name": src.name, "version": src.version, "licence": src.licence, "tier": src.tier,
            "sha256": src.sha256, "evidence": src.evidence, "registry_source": src.registry_source,
            "files": len(corpus.files) or len(corpus.documents), "turns": len(corpus.turns),
            "aggregation_queries": aggregation_queries}


def build_document(corpora: list[dict], answerer: Mapping, policy: AnswerPolicy,
                   rows: list[dict], floor_rows: list[dict], answers: list[dict],
                   store_schema_version: int | None) -> dict:
    names = sorted(c["name"] for c in corpora)
    return {
        "kind": KIND,
        "schema_version": SCHEMA_VERSION,
        "corpus": "+".join(names),
        "tier": most_restrictive_tier(c["tier"] for c in corpora),
        "corpora": sorted(corpora, key=lambda c: c["name"]),
        "answerer": dict(answerer),
        "policy": policy.to_dict(),
        "scoring": {"engine": "harness.studies.answers.grading", "measures": dict(MEASURE_TEXT),
                    "mean": "over the gold query set (an unanswered query scores 0 and counts)",
                    "scored_on": SCORED_ON},
        "scope": "each question is answered over its own corpus's rows in the transcript store",
        "store": {"schema_version": store_schema_version},
        "rows": rows,
        "floor_rows": floor_rows,
        "answers": answers,
    }


def _table(rows: list[dict]) -> str:
    lines = ["| corpus | tier | class | rule | n | unans. | EM | partial | answered |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {md_escape(r['corpus'])} | {md_escape(r['tier'])} | "
                     f"{md_escape(r['query_class'])} | {md_escape(r['rule'])} | "
                     f"{r['n']} | {r['unanswered']} | {r['EM']:.4f} | {r['partial']:.4f} | "
                     f"{r['answered']:.4f} |")
    return "\n".join(lines)


def _value(value) -> str:
    if value is None:
        return "(declined)"
    if isinstance(value, list):
        return "\\[" + ", ".join(md_escape(v) for v in value) + "\\]"
    if isinstance(value, Mapping):
        return f"{md_escape(value['speaker'])} ({md_escape(value['count'])} sessions)"
    return md_escape(value)


def render_markdown(doc: Mapping) -> str:
    """answers.md: the answer table (4 decimals), the none floor beside it, the policy."""
    a = doc["answerer"]
    out = [f"# Aggregation answers: {md_escape(a['name'])} answerer", "",
           f"{md_escape(a['description'])}.  Production path: {'yes' if a['is_production_path'] else 'no'}; "
           "model: none.", "",
           "Scored on the answer, not on a ranking: `EM` (the gate), `partial` (diagnostic), "
           "`answered` (attempted at all).  Means iterate the gold query set: a declined query "
           "scores 0 and stays in the denominator.", "",
           _table(doc["rows"]), "",
           "## The floor: the `none` answerer on the same gold set", "",
           _table(doc["floor_rows"]), "",
           "The `none` answerer declines every query, so the same scoring path over the same "
           "gold queries reads 0.0000 EM with answered 0.0000.  That floor is what makes the "
           "table above a measurement: the difference is due only to who answered.  A reference "
           "answerer's 1.0000 characterises the corpus and the mechanism (exact phrases in "
           "the generator's own question frames), not a shipped system or paraphrased "
           "questions.", "",
           "## Policy", ""]
    for key in sorted(doc["policy"]):
        out.append(f"- `{key}`: {md_escape(doc['policy'][key])}")
    out += ["", "## Corpora", "",
            "| corpus | licence | tier | sha256 | files | turns | aggregation queries |",
            "|---|---|---|---|---:|---:|---:|"]
    for c in doc["corpora"]:
        out.append(f"| {md_escape(c['name'])} | {md_escape(c['licence'])} | {md_escape(c['tier'])} "
                   f"| {md_escape(str(c['sha256'])[:12])} | {c['files']} | {c['turns']} | "
                   f"{c['aggregation_queries']} |")
    misses = [x for x in doc["answers"] if x["EM"] < 1.0]
    out += ["", f"## Answers not exactly right ({len(misses)} of {len(doc['answers'])})", ""]
    if misses:
        out += ["| corpus | query | rule | gold | predicted | EM | partial | mechanism |",
                "|---|---|---|---|---|---:|---:|---|"]
        for x in misses:
            out.append(f"| {md_escape(x['corpus'])} | {md_escape(x['query_id'])} | "
                       f"{md_escape(x['rule'])} | {_value(x['gold'])} | "
                       f"{_value(x['predicted'])} | {x['EM']:.4f} | {x['partial']:.4f} | "
                       f"{md_escape(x['mechanism'])} |")
    else:
        out.append("None.")
    return "\n".join(out) + "\n"
