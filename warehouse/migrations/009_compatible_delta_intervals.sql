-- 009_compatible_delta_intervals: a delta interval never contradicts its verdict
-- (comparisons schema 2; docs/statistics.md).  `delta_lower` / `delta_upper` are now the
-- paired randomization test inverted at the Holm level of the row's verdict
-- (alpha / holm_divisor, stated as `delta_confidence`): they exclude 0 exactly when the
-- verdict is significant.  The paired bootstrap interval, unadjusted for the family, moves to
-- `unadjusted_lower` / `unadjusted_upper`; `confidence` and `interval_method` describe it.
--
-- Rows stored from schema-1 documents had only the bootstrap interval: it is moved to the
-- unadjusted columns and their delta interval is NULL (re-run `harness intervals` to get one),
-- so no stored interval is shown beside a verdict it may contradict.  A delta bound may be
-- NULL also when it is unbounded (a measure without a range).  DuckDB cannot drop a NOT NULL
-- through ALTER on a table with dependants, so the table is rebuilt and its view replaced.

CREATE TABLE comparisons_next (
    document_id      VARCHAR NOT NULL,
    control_run_id   VARCHAR NOT NULL,
    control_name     VARCHAR NOT NULL,
    arm_run_id       VARCHAR NOT NULL,
    arm_name         VARCHAR NOT NULL,
    corpus           VARCHAR NOT NULL,
    tier             VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),  -- the runs' most restrictive
    query_class      VARCHAR NOT NULL,
    measure          VARCHAR NOT NULL,
    n                BIGINT NOT NULL,
    control_mean     DOUBLE NOT NULL,
    arm_mean         DOUBLE NOT NULL,
    delta            DOUBLE NOT NULL,
    delta_lower      DOUBLE,                          -- the verdict's own test, inverted
    delta_upper      DOUBLE,
    delta_confidence DOUBLE,                          -- 1 - alpha / holm_divisor
    holm_divisor     INTEGER,                         -- Holm's step-down level for this row
    unadjusted_lower DOUBLE NOT NULL,                 -- paired bootstrap at `confidence`
    unadjusted_upper DOUBLE NOT NULL,
    confidence       DOUBLE NOT NULL,
    interval_method  VARCHAR NOT NULL,                -- of the unadjusted interval
    discordant       BIGINT NOT NULL,
    improved         BIGINT NOT NULL,
    worsened         BIGINT NOT NULL,
    test_method      VARCHAR NOT NULL,                -- exact / monte-carlo
    permutations     BIGINT,                          -- NULL for exact enumeration
    p                DOUBLE NOT NULL,
    p_floor          DOUBLE NOT NULL,
    p_holm           DOUBLE NOT NULL,
    family_size      INTEGER NOT NULL,
    alpha            DOUBLE NOT NULL,
    verdict          VARCHAR NOT NULL CHECK (verdict IN ('significant', 'not significant',
                                                         'cannot be significant')),
    seed             BIGINT NOT NULL,
    ingested_at      TIMESTAMP NOT NULL,
    PRIMARY KEY (document_id, corpus, query_class, measure, arm_name)
);

INSERT INTO comparisons_next
SELECT document_id, control_run_id, control_name, arm_run_id, arm_name, corpus, tier,
       query_class, measure, n, control_mean, arm_mean, delta,
       NULL, NULL, NULL, NULL, delta_lower, delta_upper,
       confidence, interval_method, discordant, improved, worsened, test_method, permutations,
       p, p_floor, p_holm, family_size, alpha, verdict, seed, ingested_at
FROM comparisons;

DROP VIEW comparisons_publishable;
DROP TABLE comparisons;
ALTER TABLE comparisons_next RENAME TO comparisons;

CREATE VIEW comparisons_publishable AS
SELECT x.*
FROM comparisons AS x
WHERE x.tier = 'A'
  AND x.arm_run_id IN (SELECT run_id FROM publishable_runs)
  AND x.control_run_id IN (SELECT run_id FROM publishable_runs)
  AND len(string_split(x.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = x.arm_run_id AND c.tier = 'A'
        AND list_contains(string_split(x.corpus, '+'), c.name))
  AND len(string_split(x.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = x.control_run_id AND c.tier = 'A'
        AND list_contains(string_split(x.corpus, '+'), c.name));
