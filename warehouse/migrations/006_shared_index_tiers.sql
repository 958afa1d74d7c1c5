-- 006_shared_index_tiers: a run's corpora share one index, so a run is publishable only as a
-- whole.  The documents of every corpus in a bench index are each other's distractors and
-- share the collection statistics (BM25's IDF): a tier-B corpus beside a tier-A one changes
-- the tier-A rows and can put tier-B document ids into their rankings.  So every view that
-- publishes a number computed from a run now also requires every corpus of that run to be
-- recorded as tier A (and the index tier the run recorded, if any, to be A), on top of the
-- row's own tier and corpora.  Views are replaced here, never by editing 001-003.
--
-- Also: calibration keeps each query's candidate scores and relevance flags, so a
-- certificate's monitor is replayed from the warehouse (not from a results directory on
-- disk); a PPI result records the licence its tier was derived from.

-- Runs whose numbers may be published: recorded with at least one corpus, every corpus
-- tier A, the run's own (most restrictive) tier A and its recorded index tier, if any, A.
CREATE VIEW publishable_runs AS
SELECT r.run_id
FROM runs AS r
WHERE r.tier = 'A'
  AND coalesce(json_extract_string(r.index_info, '$.tier'), 'A') = 'A'
  AND EXISTS (SELECT 1 FROM corpora AS c WHERE c.run_id = r.run_id)
  AND NOT EXISTS (SELECT 1 FROM corpora AS c WHERE c.run_id = r.run_id AND c.tier <> 'A');

CREATE OR REPLACE VIEW metric_rows_publishable AS
SELECT m.*
FROM metric_rows AS m
WHERE m.tier = 'A'
  AND m.run_id IN (SELECT run_id FROM publishable_runs)
  AND len(string_split(m.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = m.run_id AND c.tier = 'A'
        AND list_contains(string_split(m.corpus, '+'), c.name));

CREATE OR REPLACE VIEW per_query_publishable AS
SELECT p.*
FROM per_query AS p
SEMI JOIN corpora AS c ON c.run_id = p.run_id AND c.name = p.corpus AND c.tier = 'A'
WHERE p.tier = 'A'
  AND p.run_id IN (SELECT run_id FROM publishable_runs);

CREATE OR REPLACE VIEW rankings_publishable AS
SELECT k.*
FROM rankings AS k
SEMI JOIN corpora AS c ON c.run_id = k.run_id AND c.name = k.corpus AND c.tier = 'A'
WHERE k.tier = 'A'
  AND k.run_id IN (SELECT run_id FROM publishable_runs);

CREATE OR REPLACE VIEW latency_publishable AS
SELECT l.*
FROM latency AS l
WHERE l.tier = 'A'
  AND l.run_id IN (SELECT run_id FROM publishable_runs);

CREATE OR REPLACE VIEW intervals_publishable AS
SELECT i.*
FROM intervals AS i
WHERE i.tier = 'A'
  AND i.run_id IN (SELECT run_id FROM publishable_runs)
  AND len(string_split(i.corpus, '+')) = (
      SELECT count(*) FROM corpora AS c
      WHERE c.run_id = i.run_id AND c.tier = 'A'
        AND list_contains(string_split(i.corpus, '+'), c.name));

CREATE OR REPLACE VIEW comparisons_publishable AS
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

CREATE OR REPLACE VIEW agreement_arms_publishable AS
SELECT a.*
FROM agreement_arms AS a
WHERE a.tier = 'A'
  AND a.run_id IS NOT NULL
  AND a.run_id IN (SELECT run_id FROM publishable_runs)
  AND (SELECT count(DISTINCT c.name) FROM corpora AS c
       WHERE c.run_id = a.run_id AND c.tier = 'A'
         AND c.name IN (a.corpus_a, a.corpus_b)) = 2;

-- unchanged text; re-created so it reads the replaced agreement_arms_publishable
CREATE OR REPLACE VIEW agreement_publishable AS
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

CREATE OR REPLACE VIEW certificates_publishable AS
SELECT x.*
FROM certificates AS x
WHERE x.tier = 'A'
  AND len(x.source_runs) > 0
  AND len(x.source_runs) = (SELECT count(*) FROM publishable_runs AS p
                            WHERE list_contains(x.source_runs, p.run_id));

ALTER TABLE calibration ADD COLUMN scores DOUBLE[];      -- NULL: ingested before 006
ALTER TABLE calibration ADD COLUMN relevant BOOLEAN[];   -- one flag per score

CREATE OR REPLACE VIEW calibration_publishable AS
SELECT k.*
FROM calibration AS k
SEMI JOIN corpora AS c ON c.run_id = k.run_id AND c.name = k.corpus AND c.tier = 'A'
WHERE k.tier = 'A'
  AND k.run_id IN (SELECT run_id FROM publishable_runs);

ALTER TABLE ppi ADD COLUMN licence VARCHAR;              -- NULL: none declared (not publishable)

-- A PPI result names no run: its declared tier must be A, its corpus named and the
-- (publishable) licence its tier was derived from recorded.
CREATE OR REPLACE VIEW ppi_publishable AS
SELECT p.*
FROM ppi AS p
WHERE p.tier = 'A' AND p.corpus IS NOT NULL AND p.licence IS NOT NULL;
