"""Is a certificate still in force?  valid / degenerate / expired / alarm, with the reason.

* **expired**: the current fingerprint differs from the certified one (a corpus version or
  checksum, the embedding model, the arm, the reranker or the stage changed): the promise was
  made about another procedure or another distribution, and nothing else would say so.
* **degenerate**: the promise could not be certified as calibrated: a coverage certificate is
  then sized at the maximum K (every recorded candidate), a risk certificate abstains on
  everything.
* **alarm**: the anytime-valid monitor (:mod:`harness.certificates.monitor`) has ruled out the
  promised rate on the outcomes observed since.
* **valid**: none of the above.

Checked in that order: an expired certificate is reported as expired whatever else holds.
"""

from __future__ import annotations

from typing import Iterable, Mapping, NamedTuple, Sequence

from harness.certificates.data import CalibrationRow
from harness.certificates.fingerprint import CHANGE_KINDS, Change, diff_fingerprints
from harness.certificates.monitor import CoverageMonitor
from harness.certificates.serving import set_size, should_answer

STATES: tuple[str, ...] = ("valid", "degenerate", "expired", "alarm")


class CertificateStatus(NamedTuple):
    state: str                     # one of STATES
    reason: str
    changes: tuple[Change, ...]    # fingerprint differences (empty unless expired)
    monitor: dict | None           # the monitor's summary when outcomes were given

    def to_dict(self) -> dict:
        return {"state": self.state, "reason": self.reason,
                "changes": [{"kind": c.kind, "field": c.field, "was": c.was, "now": c.now}
                            for c in self.changes],
                "monitor": self.monitor}


def promised_rate(certificate: Mapping) -> float:
    """The rate of bad events the certificate promises not to exceed."""
    if certificate.get("type") == "coverage":
        return float(certificate["alpha"])
    if certificate.get("type") == "risk":
        return float(certificate["target"])
    raise ValueError(f"unknown certificate type {certificate.get('type')!r}; "
                     "expected one of ['coverage', 'risk']")


def bad_events(certificate: Mapping, rows: Sequence[CalibrationRow]) -> list[bool]:
    """Per row, did the certified procedure fail its promise on it?

    Coverage: the first relevant candidate is not in the served set.  Risk: the query is
    answered and no relevant candidate is among the first ``context_k``.
    """
    if certificate.get("type") == "coverage":
        out = []
        for row in rows:
            rank = row.rank_in_list
            out.append(rank is None or rank > set_size(row.scores, certificate))
        return out
    k = certificate["context_k"]
    return [should_answer(row.scores, certificate)
            and (row.rank_in_list is None or row.rank_in_list > k) for row in rows]


def status(certificate: Mapping, current_fingerprint: Mapping | None = None, *,
           outcomes: Iterable[bool] | None = None, delta: float = 0.05) -> CertificateStatus:
    """The state of ``certificate`` against the current fingerprint and observed outcomes.

    ``outcomes``: bad-event indicators in the order they were observed (see
    :func:`bad_events`); the monitor alarms once the promised rate is ruled out at level
    ``delta``.  Without ``current_fingerprint`` expiry is not checked (and the reason says so).
    """
    changes: tuple[Change, ...] = ()
    if current_fingerprint is not None:
        changes = tuple(diff_fingerprints(certificate["fingerprint"], current_fingerprint))
    monitor = None
    if outcomes is not None and certificate.get("status") == "valid":
        watch = CoverageMonitor(promised_rate(certificate), delta=delta)
        for bad in outcomes:
            watch.update(bool(bad))
        monitor = watch.summary()
    if changes:
        kinds = [k for k in CHANGE_KINDS if any(c.kind == k for c in changes)]
        return CertificateStatus(
            "expired",
            f"expired: {', '.join(kinds)} changed ({'; '.join(c.describe() for c in changes)})",
            changes, monitor)
    unchecked = "" if current_fingerprint is not None else " (fingerprint not checked)"
    if certificate.get("status") == "degenerate":
        return CertificateStatus("degenerate", f"degenerate: {certificate.get('reason')}{unchecked}",
                                 changes, monitor)
    if monitor is not None and monitor["alarm"]:
        rate = monitor["promised_rate"]
        return CertificateStatus(
            "alarm",
            f"alarm: a bad-event rate <= {rate:g} is ruled out after {monitor['alarm_at']} "
            f"observed queries (e-value >= {1 / delta:g}; observed rate "
            f"{monitor['observed_rate']:.3f} over {monitor['observed']})",
            changes, monitor)
    watched = "" if monitor is None else (
        f"; monitor: {monitor['bad_events']} bad events in {monitor['observed']} queries, "
        f"e-value {monitor['e_value']:.3g} (alarm at {1 / delta:g})")
    return CertificateStatus("valid", f"valid: fingerprint unchanged{watched}{unchecked}"
                             if current_fingerprint is not None else f"valid{watched}{unchecked}",
                             changes, monitor)
