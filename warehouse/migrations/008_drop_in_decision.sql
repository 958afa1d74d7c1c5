-- 008_drop_in_decision: a migration decision may be `equivalent_drop_in` (NEW retrieves
-- what OLD retrieves: top-k overlap and nDCG difference within the drop-in thresholds;
-- docs/migration.md).  DuckDB cannot alter a CHECK, so the table is rebuilt with the same
-- columns and its rows copied; the publishable view reads it by name.

CREATE TABLE migration_decisions_next (
    document_id            VARCHAR NOT NULL,          -- sha256 of the canonical report
    eval_tier              VARCHAR NOT NULL CHECK (eval_tier IN ('T0', 'T1')),
    headline               BOOLEAN NOT NULL,          -- this tier's decision is the report's
    old_model              VARCHAR NOT NULL,
    old_label              VARCHAR NOT NULL,          -- model_id@weights sha256[:12]
    old_dimension          INTEGER NOT NULL,
    new_model              VARCHAR NOT NULL,
    new_label              VARCHAR NOT NULL,
    new_dimension          INTEGER NOT NULL,
    situation              VARCHAR,                   -- what the pair stands for, when known
    n_queries              INTEGER NOT NULL,
    index_documents        INTEGER NOT NULL,
    k                      INTEGER NOT NULL,          -- recall@k
    oracle_recall          DOUBLE NOT NULL,
    arr                    DOUBLE NOT NULL,           -- adapted recall retention
    arr_lower              DOUBLE NOT NULL,
    arr_upper              DOUBLE NOT NULL,
    old_retention          DOUBLE NOT NULL,           -- OLD alone, same denominator
    old_retention_lower    DOUBLE NOT NULL,
    old_retention_upper    DOUBLE NOT NULL,
    bridge_minus_old       DOUBLE NOT NULL,           -- ARR - OLD retention
    bridge_minus_old_lower DOUBLE NOT NULL,
    bridge_minus_old_upper DOUBLE NOT NULL,
    unadapted              DOUBLE,                    -- NULL: dimensions differ
    unadapted_lower        DOUBLE,
    unadapted_upper        DOUBLE,
    unadapted_reason       VARCHAR,
    gain                   DOUBLE,                    -- upgrade gain; NULL at T0
    gain_lower             DOUBLE,
    gain_upper             DOUBLE,
    adapter                VARCHAR NOT NULL,
    adapter_parameters     BIGINT NOT NULL,
    decision               VARCHAR NOT NULL CHECK (decision IN ('equivalent_drop_in',
                               'no_upgrade_needed', 'bridge_sufficient', 'bridge_and_migrate', 'caution',
                               'full_reindex')),
    rule                   VARCHAR NOT NULL,
    reason                 VARCHAR NOT NULL,
    flags                  VARCHAR[] NOT NULL,
    straddles              VARCHAR[] NOT NULL,
    confidence             DOUBLE NOT NULL,
    resamples              INTEGER NOT NULL,
    seed                   BIGINT NOT NULL,
    corpus                 VARCHAR NOT NULL,
    tier                   VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    ingested_at            TIMESTAMP NOT NULL,
    PRIMARY KEY (document_id, eval_tier)
);

INSERT INTO migration_decisions_next SELECT * FROM migration_decisions;
DROP TABLE migration_decisions;
ALTER TABLE migration_decisions_next RENAME TO migration_decisions;
