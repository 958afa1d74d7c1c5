"""``python -m harness certificate status CERT [--run DIR]``: is a certificate still in force?"""

from __future__ import annotations

HELP = "certificate status: valid / degenerate / expired / alarm, with the reason"


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    s = sub.add_parser("status", help="check a certificate against a current run",
                       description="Exit code: 0 valid, 1 degenerate / expired / alarm.")
    s.add_argument("certificate", help="certificate JSON written by 'harness calibrate'")
    s.add_argument("--run", default=None, metavar="DIR",
                   help="current results directory: its fingerprint is compared, and its "
                        "calibration.jsonl (if any) feeds the anytime-valid monitor")
    s.add_argument("--monitor-delta", type=float, default=0.05,
                   help="monitor false-alarm probability over the whole stream (default 0.05)")
    s.add_argument("--json", action="store_true", help="print the status as JSON")


def run(args) -> int:
    from pathlib import Path

    from harness.core.canonical import canonical_json
    from harness.certificates.data import CALIBRATION_JSONL, read_calibration
    from harness.claims import CertificateClaim, read_claim
    from harness.certificates.fingerprint import fingerprint_from_metrics
    from harness.certificates.status import bad_events, status
    from harness.evaluation.results import load_metrics

    cert = read_claim(args.certificate, CertificateClaim).to_dict()
    current, outcomes = None, None
    if args.run is not None:
        metrics = load_metrics(args.run)
        calibration = Path(args.run) / CALIBRATION_JSONL
        rows = read_calibration(calibration) if calibration.is_file() else None
        current = fingerprint_from_metrics(metrics, stage=rows[0].stage if rows else None)
        if rows and cert["status"] == "valid":
            outcomes = bad_events(cert, rows)
    result = status(cert, current, outcomes=outcomes, delta=args.monitor_delta)
    if args.json:
        print(canonical_json({"certificate": cert["document_id"], "type": cert["type"],
                              **result.to_dict()}), end="")
    else:
        print(f"{cert['type']} certificate {cert['document_id'][:12]}: {result.state.upper()}")
        print(result.reason)
    return 0 if result.state == "valid" else 1
