-- 002_statistics: what makes a number a claim (docs/statistics.md): the interval of every
-- metric row, every arm's paired test against its control (Holm-adjusted), and corpus
-- agreement results.  Every table carries `corpus` and `tier`; a row pooled over several
-- corpora names them sorted and joined by '+' and takes the most restrictive tier.
-- `document_id` is the sha256 of the canonical document the rows came from (the same
-- document arriving as a results-directory file and as a standalone document is stored once).

CREATE TABLE intervals (
    document_id VARCHAR NOT NULL,
    run_id      VARCHAR NOT NULL,
    corpus      VARCHAR NOT NULL,
    tier        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_class VARCHAR NOT NULL,
    measure     VARCHAR NOT NULL,
    estimate    DOUBLE NOT NULL,
    lower       DOUBLE NOT NULL,
    upper       DOUBLE NOT NULL,
    method      VARCHAR NOT NULL,                    -- bca / percentile / clopper-pearson
    n           BIGINT NOT NULL,
    confidence  DOUBLE NOT NULL,
    seed        BIGINT,                              -- NULL for the exact interval
    resamples   BIGINT,                              -- NULL for the exact interval
    degenerate  BOOLEAN NOT NULL,                    -- every query had the same value
    ingested_at TIMESTAMP NOT NULL,
    PRIMARY KEY (document_id, corpus, query_class, measure)
);

CREATE TABLE comparisons (
    document_id     VARCHAR NOT NULL,
    control_run_id  VARCHAR NOT NULL,
    control_name    VARCHAR NOT NULL,
    arm_run_id      VARCHAR NOT NULL,
    arm_name        VARCHAR NOT NULL,
    corpus          VARCHAR NOT NULL,
    tier            VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),  -- the runs' most restrictive
    query_class     VARCHAR NOT NULL,
    measure         VARCHAR NOT NULL,
    n               BIGINT NOT NULL,
    control_mean    DOUBLE NOT NULL,
    arm_mean        DOUBLE NOT NULL,
    delta           DOUBLE NOT NULL,
    delta_lower     DOUBLE NOT NULL,
    delta_upper     DOUBLE NOT NULL,
    confidence      DOUBLE NOT NULL,
    interval_method VARCHAR NOT NULL,
    discordant      BIGINT NOT NULL,
    improved        BIGINT NOT NULL,
    worsened        BIGINT NOT NULL,
    test_method     VARCHAR NOT NULL,                -- exact / monte-carlo
    permutations    BIGINT,                          -- NULL for exact enumeration
    p               DOUBLE NOT NULL,
    p_floor         DOUBLE NOT NULL,                 -- the smallest p these discordant pairs allow
    p_holm          DOUBLE NOT NULL,
    family_size     INTEGER NOT NULL,
    alpha           DOUBLE NOT NULL,
    verdict         VARCHAR NOT NULL CHECK (verdict IN ('significant', 'not significant',
                                                        'cannot be significant')),
    seed            BIGINT NOT NULL,
    ingested_at     TIMESTAMP NOT NULL,
    PRIMARY KEY (document_id, corpus, query_class, measure, arm_name)
);

-- One row per family of an agreement document and one pooled row (family NULL).
CREATE TABLE agreement (
    document_id       VARCHAR NOT NULL,
    family            VARCHAR,                       -- NULL: pooled over every family
    pooled            BOOLEAN NOT NULL,
    measure           VARCHAR NOT NULL,
    query_class       VARCHAR NOT NULL,
    corpus            VARCHAR NOT NULL,              -- the two corpora, sorted, joined by '+'
    corpus_a          VARCHAR NOT NULL,              -- deltas are (a, b) in this order
    corpus_b          VARCHAR NOT NULL,
    tier              VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    n                 INTEGER NOT NULL,
    tau_b             DOUBLE,                        -- NULL: undefined (a constant input)
    tau_p             DOUBLE,
    tau_method        VARCHAR,
    spearman          DOUBLE,
    spearman_p        DOUBLE,
    pearson           DOUBLE,
    pearson_p         DOUBLE,
    pearson_flag      BOOLEAN,                       -- outlier-driven: distrust
    agree             INTEGER NOT NULL,
    disagree          INTEGER NOT NULL,
    inert             INTEGER NOT NULL,
    one_sided         INTEGER NOT NULL,
    agree_share       DOUBLE,
    winner_a          VARCHAR,
    winner_a_delta    DOUBLE,
    winner_b          VARCHAR,
    winner_b_delta    DOUBLE,
    same_winner       BOOLEAN,
    range_a           DOUBLE,
    range_b           DOUBLE,
    range_ratio       DOUBLE,                        -- range on b / range on a
    caveat            VARCHAR,
    ingested_at       TIMESTAMP NOT NULL
);

CREATE TABLE agreement_arms (
    document_id VARCHAR NOT NULL,
    family      VARCHAR NOT NULL,
    arm         VARCHAR NOT NULL,
    axis        VARCHAR,
    measure     VARCHAR NOT NULL,
    query_class VARCHAR NOT NULL,
    corpus      VARCHAR NOT NULL,
    corpus_a    VARCHAR NOT NULL,
    corpus_b    VARCHAR NOT NULL,
    tier        VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    delta_a     DOUBLE NOT NULL,
    delta_b     DOUBLE NOT NULL,
    sign        VARCHAR NOT NULL,                    -- agree / disagree / inert / one-sided
    source      VARCHAR NOT NULL,                    -- measured / given (typed in: tier B)
    run_id      VARCHAR,
    included    BOOLEAN NOT NULL,
    PRIMARY KEY (document_id, family, arm)
);

-- Publishable views: the row's own tier is A and every run it was computed from records
-- every contributing corpus as tier A.  A run or corpus that is not in the warehouse fails
-- closed (the row stays out).
CREATE VIEW intervals_publishable AS
SELECT i.*
FROM intervals AS i
WHERE i.tier = 'A'
  AND len(string_split(i.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = i.run_id AND c.tier = 'A'
        AND list_contains(string_split(i.corpus, '+'), c.name));

CREATE VIEW comparisons_publishable AS
SELECT x.*
FROM comparisons AS x
WHERE x.tier = 'A'
  AND len(string_split(x.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = x.arm_run_id AND c.tier = 'A'
        AND list_contains(string_split(x.corpus, '+'), c.name))
  AND len(string_split(x.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = x.control_run_id AND c.tier = 'A'
        AND list_contains(string_split(x.corpus, '+'), c.name));

CREATE VIEW agreement_arms_publishable AS
SELECT a.*
FROM agreement_arms AS a
WHERE a.tier = 'A'
  AND a.run_id IS NOT NULL
  AND (SELECT count(DISTINCT c.name) FROM corpora AS c
       WHERE c.run_id = a.run_id AND c.tier = 'A'
         AND c.name IN (a.corpus_a, a.corpus_b)) = 2;

-- An agreement row is publishable when its own tier is A and every arm it summarises
-- (its family's included arms; every included arm for the pooled row) is.
CREATE VIEW agreement_publishable AS
SELECT g.*
FROM agreement AS g
WHERE g.tier = 'A'
  AND NOT EXISTS (
      SELECT 1 FROM agreement_arms AS a
      WHERE a.document_id = g.document_id AND a.included
        AND (g.pooled OR a.family = g.family)
        AND NOT EXISTS (
            SELECT 1 FROM agreement_arms_publishable AS p
            WHERE p.document_id = a.document_id AND p.family = a.family AND p.arm = a.arm));
