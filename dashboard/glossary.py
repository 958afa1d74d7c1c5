"""The dashboard's glossary: the statistical and licensing terms its pages use, as data.

Each entry is ``(term, definition)``; the Glossary page lists them all and a page's
"Terms used here" expander lists the ones it names (:func:`dashboard.common.terms`).
Definitions follow the product's documents (docs/statistics.md, docs/certificates.md,
docs/migration.md, docs/corpora.md) and cite the paper behind each method.
"""

from __future__ import annotations

TERMS: dict[str, str] = {
    "Holm": (
        "Holm's step-down correction (Holm 1979) over a family: every arm compared with one "
        "control on one measure in one corpus × class. Sorted ascending, the j-th p becomes "
        "min(1, max over i ≤ j of (m − i + 1)·p(i)). A delta is marked * (significant) when "
        "its Holm-adjusted p is at most alpha; the family-wise error stays at or below "
        "alpha under any dependence between arms."),
    "p floor": (
        "The smallest p the paired permutation test can give: with k queries that differ "
        "(discordant pairs) no outcome is below 2^(1−k). Three differing queries give 0.25; "
        "at alpha 0.05 at least 6 must differ. A delta whose family floor after Holm is "
        "above alpha is marked 'floor': it cannot be significant, whatever its size."),
    "delta interval": (
        "The interval printed beside a delta and its verdict: the same paired sign-flip "
        "test, inverted (every shift d it does not reject on the differences minus d), at "
        "the level Holm decided that row at (alpha / (m − r + 1) for a rejected one, "
        "alpha / (m − R) once the step-down stopped). It excludes 0 exactly when the verdict "
        "is significant. The bootstrap interval of the delta is shown only as 'unadjusted'."),
    "Judged@10": (
        "The share of a run's top 10 that the qrels judge at all (any label; ir_measures' "
        "Judged@k). A low value means the measures count unjudged documents as "
        "non-relevant: the run is under-judged, not necessarily weak."),
    "BCa": (
        "Bias-corrected and accelerated bootstrap interval (Efron 1987): the percentile "
        "interval of resampled query means with its quantile levels shifted for the "
        "bootstrap's bias (z0) and skew (the jackknife acceleration). The default interval "
        "of a non-binary measure; 0/1 measures use the exact Clopper-Pearson interval."),
    "e-value": (
        "A non-negative statistic whose expectation is at most 1 while the promise holds "
        "(Vovk & Wang 2021). The certificate monitor multiplies bets on the bad-event stream "
        "into a wealth (a betting e-process, Waudby-Smith & Ramdas 2024); by Ville's "
        "inequality it ever reaches 1/delta with chance at most delta, however often it is "
        "looked at, so reaching it raises the alarm."),
    "conformal set": (
        "Split conformal prediction (Vovk et al. 2005; Angelopoulos & Bates 2023): the "
        "passages whose score clears a threshold calibrated on held-out queries, so that a "
        "new query's set holds a relevant passage with probability at least 1 − alpha "
        "(coverage). Its size varies per query."),
    "fixed K": (
        "The baseline a conformal set is compared with: always send the top K, with K the "
        "same conformal quantile over first-relevant ranks, so it makes the same coverage "
        "promise. 'Mean set size vs fixed K' says how much the adaptive set saves."),
    "ARR": (
        "Adapted recall retention (Migration page): mean recall@10 of NEW's queries mapped by "
        "the adapter into OLD's index, divided by the oracle's (NEW's queries in a NEW "
        "index, what a full re-index gives). Not comparable across model pairs: against a "
        "weak oracle a high ARR means little."),
    "T0 / T1": (
        "The two tiers of an embedding-migration study. T0: documents as queries (proxies "
        "from the corpus's own chunks; cannot evaluate query encoding or prefixes). T1: the "
        "corpus's real queries and judgements. A report's headline is T1's when T1 was "
        "measured."),
    "tier A / B / C": (
        "A corpus's licence tier. A: a publishable licence traced to the corpus's own terms. "
        "B: internal only (non-commercial, research-only, or unknown: doubt fails closed). "
        "C: unobtainable (no copy may be held). A result is tier A only when every corpus "
        "it was computed from, and every corpus in its run's index, is tier A; the "
        "Publishable view shows nothing else."),
}
