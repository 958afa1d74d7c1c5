-- 005_answers: aggregation answers scored on the answer (docs/answers.md), one answers.json
-- per document.  The answer engine's measures live in their own columns of their own tables:
-- `em`, `partial` and `answered_share`.  No column here is named after a retrieval measure,
-- and `answered_share` is not `answered` (per_query.answered is a retrieval column), so an
-- answer score can never be read as a retrieval score.  Every table carries `corpus` and
-- `tier`; a row pooled over several corpora names them sorted and joined by '+' and takes
-- the most restrictive tier of its corpora.

CREATE TABLE answer_runs (
    document_id          VARCHAR PRIMARY KEY,        -- sha256 of the canonical answers.json
    run_id               VARCHAR,                    -- the retrieval run whose results directory held it; NULL: standalone
    corpus               VARCHAR NOT NULL,           -- the answered corpora, sorted, joined by '+'
    tier                 VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    answerer             VARCHAR NOT NULL,           -- none / reference / product
    is_production_path   BOOLEAN NOT NULL,
    answerer_info        JSON NOT NULL,              -- the answerer block (description, row limit, model: null)
    count_tolerance      INTEGER NOT NULL,           -- policy: a count within this of the gold is exact
    set_credit           VARCHAR NOT NULL,           -- policy: partial credit of a file set (f1 / exact)
    policy               JSON NOT NULL,              -- every scoring rule as the document states it
    scoring              JSON NOT NULL,              -- the engine, its measures, what the mean iterates
    document_version     INTEGER NOT NULL,           -- answers.json schema_version
    store_schema_version INTEGER,                    -- transcript store schema; NULL: no store read (none)
    created_at           TIMESTAMP,                  -- when answered, if known: its run's time; NULL standalone (answers.json holds no clock)
    ingested_at          TIMESTAMP NOT NULL
);

-- The corpora an answers document was computed on, as it declared them.
CREATE TABLE answer_corpora (
    document_id         VARCHAR NOT NULL,
    corpus              VARCHAR NOT NULL,
    tier                VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    version             VARCHAR,
    licence             VARCHAR,
    evidence            VARCHAR,
    sha256              VARCHAR,
    files               BIGINT,
    turns               BIGINT,
    aggregation_queries BIGINT,
    declared            JSON NOT NULL,               -- the corpus block as answers.json gave it
    PRIMARY KEY (document_id, corpus)
);

-- rows[] and floor_rows[]: per corpus x query class x rule ('all' and each rule).
CREATE TABLE answer_rows (
    document_id    VARCHAR NOT NULL,
    corpus         VARCHAR NOT NULL,
    tier           VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_class    VARCHAR NOT NULL,
    rule           VARCHAR NOT NULL,
    is_floor       BOOLEAN NOT NULL,                 -- true: the none answerer over the same gold set
    n              BIGINT NOT NULL,                  -- gold queries (the mean's denominator)
    unanswered     BIGINT NOT NULL,
    em             DOUBLE NOT NULL,
    partial        DOUBLE NOT NULL,
    answered_share DOUBLE NOT NULL,
    PRIMARY KEY (document_id, is_floor, corpus, query_class, rule)
);

-- answers[]: one per gold query.
CREATE TABLE answers (
    document_id    VARCHAR NOT NULL,
    corpus         VARCHAR NOT NULL,
    tier           VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_class    VARCHAR NOT NULL,
    query_id       VARCHAR NOT NULL,
    rule           VARCHAR NOT NULL,
    question       VARCHAR NOT NULL,
    answer_kind    VARCHAR NOT NULL,                 -- count / file_set / speaker
    gold           JSON NOT NULL,
    predicted      JSON,                             -- NULL: declined
    em             DOUBLE NOT NULL,
    partial        DOUBLE NOT NULL,
    answered_share DOUBLE NOT NULL,                  -- 1 attempted, 0 declined
    mechanism      VARCHAR NOT NULL,
    notes          JSON NOT NULL,
    PRIMARY KEY (document_id, corpus, query_id)
);

-- Publishable: a row's own tier is A and every corpus it names is declared tier A by its
-- document.  A corpus the document does not declare fails closed.
CREATE VIEW answer_rows_publishable AS
SELECT r.*
FROM answer_rows AS r
WHERE r.tier = 'A'
  AND len(string_split(r.corpus, '+')) = (
      SELECT count(*) FROM answer_corpora AS c
      WHERE c.document_id = r.document_id AND c.tier = 'A'
        AND list_contains(string_split(r.corpus, '+'), c.corpus));

CREATE VIEW answers_publishable AS
SELECT v.*
FROM answers AS v
SEMI JOIN answer_corpora AS c
    ON c.document_id = v.document_id AND c.corpus = v.corpus AND c.tier = 'A'
WHERE v.tier = 'A';

CREATE VIEW answer_corpora_publishable AS
SELECT c.*
FROM answer_corpora AS c
WHERE c.tier = 'A';

-- A whole answers run is publishable only when every corpus it answered over is tier A.
CREATE VIEW answer_runs_publishable AS
SELECT a.*
FROM answer_runs AS a
WHERE a.tier = 'A'
  AND EXISTS (SELECT 1 FROM answer_corpora AS c WHERE c.document_id = a.document_id)
  AND NOT EXISTS (SELECT 1 FROM answer_corpora AS c
                  WHERE c.document_id = a.document_id AND c.tier <> 'A');
