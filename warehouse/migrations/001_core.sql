-- 001_core: runs, the corpora they were measured on, their metric rows, per-query values,
-- rankings and latency, the files of each results directory, and standalone documents.
-- Every table holding results carries `corpus` and `tier` (A publishable, B internal only,
-- C unobtainable).  A row pooled over several corpora names them sorted and joined by '+'
-- and takes the most restrictive tier of its corpora.

CREATE TABLE runs (
    run_id                     VARCHAR PRIMARY KEY,  -- sha256 of the canonical metrics.json
    control_name               VARCHAR NOT NULL,
    corpus                     VARCHAR NOT NULL,     -- the run's corpora, sorted, joined by '+'
    tier                       VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    created_at                 TIMESTAMP,            -- UTC; runinfo.json's, else metrics.json's mtime
    ingested_at                TIMESTAMP NOT NULL,   -- UTC
    backend                    VARCHAR,
    mode                       VARCHAR,
    stage                      VARCHAR,
    scope                      VARCHAR,
    granularity                VARCHAR,
    fusion                     JSON,
    retrieval                  JSON NOT NULL,
    embedding_models           JSON,
    embedding_verdict          VARCHAR,
    embedding_dimension        INTEGER,
    configured_embedding_model VARCHAR,
    index_info                 JSON,
    metric_engine              VARCHAR NOT NULL,
    metric_engine_version      VARCHAR NOT NULL,
    metric_engine_info         JSON NOT NULL,
    relevance_policy           JSON NOT NULL,
    code_revision              VARCHAR,              -- NULL when unknown
    schema_version             INTEGER NOT NULL,     -- of metrics.json
    source_dir                 VARCHAR,
    metrics_json               VARCHAR NOT NULL      -- the claim itself; its sha256 is run_id
);

CREATE TABLE corpora (
    run_id    VARCHAR NOT NULL,
    name      VARCHAR NOT NULL,
    version   VARCHAR,
    licence   VARCHAR,
    tier      VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    evidence  VARCHAR,
    sha256    VARCHAR,
    files     BIGINT,
    chunks    BIGINT,
    declared  JSON NOT NULL,                         -- the corpus block as metrics.json gave it
    PRIMARY KEY (run_id, name)
);

CREATE TABLE metric_rows (
    run_id                      VARCHAR NOT NULL,
    corpus                      VARCHAR NOT NULL,
    tier                        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_class                 VARCHAR NOT NULL,
    measure                     VARCHAR NOT NULL,
    value                       DOUBLE NOT NULL,
    n                           BIGINT NOT NULL,
    queries_unanswered          BIGINT NOT NULL,
    queries_dropped_unjudgeable BIGINT NOT NULL
);

CREATE TABLE per_query (
    run_id      VARCHAR NOT NULL,
    corpus      VARCHAR NOT NULL,
    tier        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_class VARCHAR,                             -- NULL: the query has no class
    query_id    VARCHAR NOT NULL,
    measure     VARCHAR NOT NULL,
    value       DOUBLE NOT NULL,
    answered    BOOLEAN
);

CREATE TABLE rankings (
    run_id   VARCHAR NOT NULL,
    corpus   VARCHAR NOT NULL,
    tier     VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_id VARCHAR NOT NULL,
    rank     INTEGER NOT NULL,
    doc_id   VARCHAR NOT NULL,
    score    DOUBLE NOT NULL
);

CREATE TABLE latency (
    run_id      VARCHAR PRIMARY KEY,
    corpus      VARCHAR NOT NULL,
    tier        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    samples     DOUBLE[] NOT NULL,                   -- milliseconds, in the order runinfo gave
    concurrency INTEGER,
    reported    JSON                                 -- the summary runinfo.json carried
);

CREATE TABLE run_files (
    run_id    VARCHAR NOT NULL,
    name      VARCHAR NOT NULL,
    sha256    VARCHAR NOT NULL,
    bytes     BIGINT NOT NULL,
    stored_by VARCHAR,                               -- the handler that stored it; NULL: kept as a checksum only
    PRIMARY KEY (run_id, name)
);

CREATE TABLE documents (
    document_id VARCHAR PRIMARY KEY,                 -- sha256 of the canonical document
    kind        VARCHAR NOT NULL,
    run_id      VARCHAR,
    corpus      VARCHAR,
    tier        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    source      VARCHAR,
    ingested_at TIMESTAMP NOT NULL,
    content     JSON NOT NULL
);

-- The publishable views: a row is publishable only if its own tier is A and every corpus it
-- was computed from is recorded, for its run, as tier A.  A missing corpus fails closed.
CREATE VIEW metric_rows_publishable AS
SELECT m.*
FROM metric_rows AS m
WHERE m.tier = 'A'
  AND len(string_split(m.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = m.run_id AND c.tier = 'A'
        AND list_contains(string_split(m.corpus, '+'), c.name));

CREATE VIEW per_query_publishable AS
SELECT p.*
FROM per_query AS p
SEMI JOIN corpora AS c ON c.run_id = p.run_id AND c.name = p.corpus AND c.tier = 'A'
WHERE p.tier = 'A';

CREATE VIEW rankings_publishable AS
SELECT k.*
FROM rankings AS k
SEMI JOIN corpora AS c ON c.run_id = k.run_id AND c.name = k.corpus AND c.tier = 'A'
WHERE k.tier = 'A';

CREATE VIEW latency_publishable AS
SELECT l.*
FROM latency AS l
WHERE l.tier = 'A'
  AND NOT EXISTS (SELECT 1 FROM corpora AS c WHERE c.run_id = l.run_id AND c.tier <> 'A');
