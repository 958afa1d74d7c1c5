"""The Certificates page: stored certificates, their current runs and calibration records, PPI results."""

from __future__ import annotations

from warehouse.queries.base import _one_run, relation
from warehouse.db import connect


_CERTIFICATES = (
    "WITH x AS (SELECT * FROM {rel}), "
    "src AS (SELECT DISTINCT x.document_id, r.control_name "
    "FROM x, unnest(x.source_runs) AS s(run_id) JOIN runs AS r ON r.run_id = s.run_id), "
    "cur AS (SELECT src.document_id, r.run_id AS current_run_id, "
    "r.control_name AS current_control_name, r.created_at AS current_created_at, "
    "r.metrics_json AS current_metrics, r.source_dir AS current_source_dir "
    "FROM src JOIN runs AS r ON r.control_name = src.control_name "
    "SEMI JOIN {visible} AS v ON v.run_id = r.run_id "
    "QUALIFY row_number() OVER (PARTITION BY src.document_id "
    "ORDER BY r.created_at DESC, r.ingested_at DESC, r.run_id) = 1) "
    "SELECT x.document_id, x.certificate_id, x.type, x.status, x.alpha, x.target, "
    "x.delta, x.threshold, x.temperature, x.context_k, x.k_max, x.split_tune, "
    "x.split_calibrate, x.split_heldout, x.seed, x.heldout_n, x.heldout_rate, "
    "x.heldout_lower, x.heldout_upper, x.mean_set_size, x.fixed_k, x.answer_rate, "
    "x.queries_needed, x.stage, x.source_runs, x.corpus, x.tier, x.reason, "
    "x.ingested_at, d.content AS document, cur.current_run_id, "
    "cur.current_control_name, cur.current_created_at, cur.current_metrics, "
    "cur.current_source_dir, f.sha256 AS current_calibration_sha256 "
    "FROM x JOIN documents AS d ON d.document_id = x.document_id "
    "LEFT JOIN cur ON cur.document_id = x.document_id "
    "LEFT JOIN run_files AS f ON f.run_id = cur.current_run_id "
    "AND f.name = 'calibration.jsonl' "
    "ORDER BY x.ingested_at, x.document_id")


def certificates(view: str, *, db_path=None):
    """Every stored certificate visible in ``view`` with the full document (``document``,
    JSON) and the run it must now hold for: the newest run *visible in the same view*
    sharing a control name with a run it was calibrated on (``current_run_id``, its
    ``current_metrics`` JSON, its results directory and calibration.jsonl checksum as
    ingested).  Status as issued is ``status``; the live status (expired, alarm) is
    ``dashboard.certificate_status``."""
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(_CERTIFICATES.format(rel=relation(view, "certificates"),
                                                  visible=relation(view, "runs")))


def certificate_monitoring(view: str, *, db_path=None):
    """``(certificates, calibration)``: :func:`certificates`, and the stored calibration
    records of each one's current run (``calibration`` in the same view, ordered by run,
    corpus and query id), from which a certificate's live status is judged
    (``dashboard.certificate_status``).  Under ``publishable`` nothing of a run with a non-A
    corpus is read, so no status computed from these can name one."""
    with connect(db_path, read_only=True) as conn:
        certs = conn.query_df(_CERTIFICATES.format(rel=relation(view, "certificates"),
                                                   visible=relation(view, "runs")))
        current = sorted({r for r in certs["current_run_id"].dropna()}) if len(certs) else []
        calibration = conn.query_df(
            "SELECT k.run_id, k.corpus, k.tier, k.query_id, k.query_class, k.stage, k.scores, "
            f"k.relevant, k.first_relevant_rank FROM {relation(view, 'calibration')} AS k "
            "WHERE list_contains(?::VARCHAR[], k.run_id) ORDER BY k.run_id, k.corpus, "
            "k.query_id", [current])
    return certs, calibration


def ppi_results(view: str, *, db_path=None):
    """Stored judge-calibrated (PPI / PPI++) estimates with their intervals."""
    rel = relation(view, "ppi")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT p.document_id, p.method, p.alpha, p.estimate, p.lower, p.upper, "
            "p.lambda_value AS lambda, p.judge_bias, p.effective_labels, p.labelled, "
            "p.unlabelled, p.labels_only_estimate, p.labels_only_lower, p.labels_only_upper, "
            f"p.judge_only_estimate, p.corpus, p.tier, p.ingested_at FROM {rel} AS p "
            "ORDER BY p.ingested_at, p.document_id")


def calibration(run, view: str, *, db_path=None):
    """One run's calibration records per query: stage, first relevant rank (NULL: none
    retrieved), top score, candidates recorded."""
    rel = relation(view, "calibration")
    with connect(db_path, read_only=True) as conn:
        rid = _one_run(conn, run)
        return conn.query_df(
            "SELECT k.corpus, k.tier, k.query_id, k.query_class, k.stage, "
            f"k.first_relevant_rank, k.top_score, k.candidates FROM {rel} AS k "
            "WHERE k.run_id = ? ORDER BY k.corpus, k.query_id", [rid])
