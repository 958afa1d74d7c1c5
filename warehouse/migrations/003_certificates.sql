-- 003_certificates: certificates (docs/certificates.md), judge calibration (PPI) results and
-- the per-query calibration records a bench run writes.  Every table carries `corpus` and
-- `tier`.  A certificate's status here is the status it was issued with (valid /
-- degenerate); whether it still holds (expired, alarm) is computed against the run served
-- now, never stored.

CREATE TABLE certificates (
    document_id      VARCHAR PRIMARY KEY,            -- sha256 of the canonical document
    certificate_id   VARCHAR NOT NULL,               -- the certificate's own document_id field
    type             VARCHAR NOT NULL CHECK (type IN ('coverage', 'risk')),
    status           VARCHAR NOT NULL CHECK (status IN ('valid', 'degenerate')),
    alpha            DOUBLE,                         -- coverage: promise P(covered) >= 1 - alpha
    target           DOUBLE,                         -- risk: promised risk
    delta            DOUBLE,                         -- risk: with probability >= 1 - delta
    threshold        DOUBLE,                         -- coverage threshold or risk lambda; NULL when degenerate
    temperature      DOUBLE,
    context_k        INTEGER,
    k_max            INTEGER,
    split_tune       INTEGER,
    split_calibrate  INTEGER,
    split_heldout    INTEGER,
    seed             BIGINT NOT NULL,
    heldout_n        INTEGER,
    heldout_rate     DOUBLE,                         -- coverage: held-out coverage; risk: held-out risk
    heldout_lower    DOUBLE,
    heldout_upper    DOUBLE,
    mean_set_size    DOUBLE,                         -- coverage: adaptive sets on the held-out split
    fixed_k          INTEGER,                        -- coverage: fixed K with the same promise
    answer_rate      DOUBLE,                         -- risk: held-out share answered
    queries_needed   BIGINT,                         -- risk, degenerate: calibration queries that would prove it
    stage            VARCHAR,
    fingerprint      JSON NOT NULL,
    source_runs      VARCHAR[] NOT NULL,             -- run ids calibrated on
    corpus           VARCHAR NOT NULL,               -- the calibrated corpora, sorted, joined by '+'
    tier             VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    reason           VARCHAR NOT NULL,
    ingested_at      TIMESTAMP NOT NULL
);

CREATE TABLE ppi (
    document_id          VARCHAR PRIMARY KEY,
    ppi_id               VARCHAR NOT NULL,           -- the document's own document_id field
    method               VARCHAR NOT NULL,
    alpha                DOUBLE NOT NULL,
    estimate             DOUBLE NOT NULL,
    lower                DOUBLE,
    upper                DOUBLE,
    lambda_value         DOUBLE NOT NULL,             -- PPI++ power-tuning lambda
    judge_bias           DOUBLE,
    effective_labels     DOUBLE,
    labelled             BIGINT NOT NULL,
    unlabelled           BIGINT NOT NULL,
    labels_only_estimate DOUBLE,
    labels_only_lower    DOUBLE,
    labels_only_upper    DOUBLE,
    judge_only_estimate  DOUBLE,
    judge_sha256         VARCHAR,
    labels_sha256        VARCHAR,
    corpus               VARCHAR,                    -- NULL: not named (never publishable)
    tier                 VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    ingested_at          TIMESTAMP NOT NULL
);

-- calibration.jsonl of a run, per query: enough to show what a certificate was calibrated
-- on (the candidate scores themselves stay in the results directory).
CREATE TABLE calibration (
    run_id              VARCHAR NOT NULL,
    corpus              VARCHAR NOT NULL,
    tier                VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_id            VARCHAR NOT NULL,
    query_class         VARCHAR,
    stage               VARCHAR NOT NULL,
    first_relevant_rank INTEGER,                     -- NULL: no relevant candidate retrieved
    top_score           DOUBLE,
    candidates          INTEGER NOT NULL,            -- scores recorded (at most 50)
    PRIMARY KEY (run_id, corpus, query_id)
);

-- Publishable: own tier A and every run calibrated on is in the warehouse with tier-A corpora only.
CREATE VIEW certificates_publishable AS
SELECT x.*
FROM certificates AS x
WHERE x.tier = 'A'
  AND len(x.source_runs) > 0
  AND len(x.source_runs) = (SELECT count(*) FROM runs AS r
                            WHERE list_contains(x.source_runs, r.run_id))
  AND NOT EXISTS (SELECT 1 FROM corpora AS c
                  WHERE list_contains(x.source_runs, c.run_id) AND c.tier <> 'A');

-- A PPI result names no run: its declared tier must be A and its corpus named.
CREATE VIEW ppi_publishable AS
SELECT p.*
FROM ppi AS p
WHERE p.tier = 'A' AND p.corpus IS NOT NULL;

CREATE VIEW calibration_publishable AS
SELECT k.*
FROM calibration AS k
SEMI JOIN corpora AS c ON c.run_id = k.run_id AND c.name = k.corpus AND c.tier = 'A'
WHERE k.tier = 'A';
