-- 011_queries: the text of each scored query (queries.jsonl, pinned by its run's claim), so
-- the Compare page shows what was asked beside each query's change.  A query's text is as
-- restrictive as its corpus: the tier is the one metrics.json gives the corpus, never the
-- file's, and the publishable view follows the rankings' rule (the row, its corpus and the
-- whole run tier A).
CREATE TABLE queries (
    run_id   VARCHAR NOT NULL,
    corpus   VARCHAR NOT NULL,
    tier     VARCHAR NOT NULL CHECK (tier IN ('A', 'B', 'C')),
    query_id VARCHAR NOT NULL,
    text     VARCHAR NOT NULL
);

CREATE VIEW queries_publishable AS
SELECT q.*
FROM queries AS q
SEMI JOIN corpora AS c ON c.run_id = q.run_id AND c.name = q.corpus AND c.tier = 'A'
WHERE q.tier = 'A'
  AND q.run_id IN (SELECT run_id FROM publishable_runs);
