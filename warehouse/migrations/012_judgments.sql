-- 012_judgments: judging tasks (a pool with its texts, harness qrels task) and the labels
-- people make on the Judge page (docs/judgments.md).  A task's tier is its corpus's, checked
-- against the licence record it carries and capped like any submission that no trusted
-- signature vouches for; its pairs, texts and every label made on it carry that tier, so a
-- tier-B document, or a label of one, never reaches the publishable snapshot.  Nor do
-- people's identities or local paths: the publishable views give each rater as a pseudonym
-- ('rater-' and the first 12 hex of the sha256 of the identity; a name of that form is
-- one already, so the publishable snapshot's own view leaves it) and no source path.
CREATE TABLE judging_tasks (
    task_id     VARCHAR PRIMARY KEY,                  -- sha256 of the canonical task.json
    name        VARCHAR NOT NULL,
    corpus      VARCHAR NOT NULL,
    licence     VARCHAR NOT NULL,
    tier        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    depth       INTEGER NOT NULL,
    pool_sha256 VARCHAR NOT NULL,
    overlap     DOUBLE NOT NULL,
    seed        BIGINT NOT NULL,
    pairs       INTEGER NOT NULL,
    source      VARCHAR NOT NULL,
    ingested_at TIMESTAMP NOT NULL                    -- UTC
);

CREATE TABLE task_pairs (
    task_id  VARCHAR NOT NULL,
    position INTEGER NOT NULL,                        -- queue order, from 0
    query_id VARCHAR NOT NULL,
    doc_id   VARCHAR NOT NULL,
    sampled  BOOLEAN NOT NULL,                        -- in the hand-labelling sample
    tier     VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C'))
);

CREATE TABLE task_texts (
    task_id VARCHAR NOT NULL,
    kind    VARCHAR NOT NULL CHECK (kind IN ('query', 'document')),
    id      VARCHAR NOT NULL,
    text    VARCHAR NOT NULL,
    tier    VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C'))
);

-- one row per labels batch applied (its id: sha256 of the canonical labels.json), so the
-- same batch ingested twice adds nothing
CREATE TABLE label_batches (
    batch_id    VARCHAR PRIMARY KEY,
    task_id     VARCHAR NOT NULL,
    labels      INTEGER NOT NULL,
    tier        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    source      VARCHAR NOT NULL,
    ingested_at TIMESTAMP NOT NULL
);

CREATE TABLE judgments (
    batch_id VARCHAR NOT NULL,
    task_id  VARCHAR NOT NULL,
    query_id VARCHAR NOT NULL,
    doc_id   VARCHAR NOT NULL,
    rater    VARCHAR NOT NULL,
    label    INTEGER NOT NULL CHECK (label BETWEEN 0 AND 3),
    labelled_at VARCHAR NOT NULL,                     -- ISO 8601 UTC, as labelled
    tier     VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C'))
);

CREATE VIEW judging_tasks_publishable AS
SELECT * REPLACE ('' AS source) FROM judging_tasks WHERE tier = 'A';

CREATE VIEW task_pairs_publishable AS
SELECT p.* FROM task_pairs AS p
WHERE p.tier = 'A' AND p.task_id IN (SELECT task_id FROM judging_tasks WHERE tier = 'A');

CREATE VIEW task_texts_publishable AS
SELECT t.* FROM task_texts AS t
WHERE t.tier = 'A' AND t.task_id IN (SELECT task_id FROM judging_tasks WHERE tier = 'A');

CREATE VIEW label_batches_publishable AS
SELECT b.* REPLACE ('' AS source) FROM label_batches AS b
WHERE b.tier = 'A' AND b.task_id IN (SELECT task_id FROM judging_tasks WHERE tier = 'A');

CREATE VIEW judgments_publishable AS
SELECT j.* REPLACE (CASE WHEN j.rater SIMILAR TO 'rater-[0-9a-f]{12}' THEN j.rater
                         ELSE 'rater-' || left(sha256(j.rater), 12) END AS rater)
FROM judgments AS j
WHERE j.tier = 'A' AND j.task_id IN (SELECT task_id FROM judging_tasks WHERE tier = 'A');

-- the team ingester applies judging tasks and labels batches too: the submissions table's
-- kinds widen (DuckDB changes a CHECK only by rebuilding the table)
CREATE TABLE submissions_012 (
    digest       VARCHAR PRIMARY KEY,
    kind         VARCHAR NOT NULL CHECK (kind IN ('results', 'document', 'judging-task',
                                                  'labels')),
    state        VARCHAR NOT NULL CHECK (state IN ('applied', 'quarantined')),
    stored_id    VARCHAR,
    inserted     BOOLEAN NOT NULL,
    tier_cap     VARCHAR CHECK (tier_cap IN ('A', 'B', 'C')),
    trust        VARCHAR NOT NULL,
    signed_by    VARCHAR,
    reason       VARCHAR,
    store_url    VARCHAR NOT NULL,
    submitted_at VARCHAR,
    applied_at   TIMESTAMP NOT NULL
);
INSERT INTO submissions_012 SELECT * FROM submissions;
DROP TABLE submissions;
ALTER TABLE submissions_012 RENAME TO submissions;
