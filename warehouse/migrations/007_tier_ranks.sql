-- The licence tiers' order as integer ranks, so no query orders tiers by comparing strings.
-- The rows are filled from harness.core.tiers (the only definition of the order) every time
-- the schema is migrated, and a reader refuses a warehouse whose ranks disagree with it.
CREATE TABLE tier_ranks (
    tier VARCHAR PRIMARY KEY,
    rank INTEGER NOT NULL UNIQUE        -- 0 = least restrictive (A)
);

-- tier_rank('B') = 1; tier_at(1) = 'B'
-- (parameter and alias names are unusual on purpose: a macro's body is expanded inside the
-- calling query, so they must not meet the caller's own aliases)
CREATE MACRO tier_rank(tier_value) AS
    (SELECT tier_ranks_row.rank FROM tier_ranks AS tier_ranks_row
     WHERE tier_ranks_row.tier = tier_value);
CREATE MACRO tier_at(rank_value) AS
    (SELECT tier_ranks_row.tier FROM tier_ranks AS tier_ranks_row
     WHERE tier_ranks_row.rank = rank_value);
-- the more restrictive of two tiers (a value drawn from both is as restrictive as either)
CREATE MACRO stricter(tier_left, tier_right) AS
    tier_at(greatest(tier_rank(tier_left), tier_rank(tier_right)));

-- Every stored table is read through `<table>_publishable` under the publishable view, so the
-- view names follow from the table names (warehouse.queries.base.relation); runs and corpora
-- get theirs here: the runs whose every corpus (the whole shared index) is tier A.
CREATE VIEW runs_publishable AS
SELECT r.* FROM runs AS r WHERE r.run_id IN (SELECT p.run_id FROM publishable_runs AS p);

CREATE VIEW corpora_publishable AS
SELECT c.* FROM corpora AS c WHERE c.run_id IN (SELECT p.run_id FROM publishable_runs AS p);
