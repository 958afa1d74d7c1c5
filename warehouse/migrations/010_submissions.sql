-- 010_submissions: the submissions the team ingester has taken from the shared store
-- (docs/team.md).  A row is written in the same transaction as the rows the submission
-- stored, so "applied" and "stored" cannot disagree after a crash; a submission that was
-- refused is recorded as quarantined with its located reason and never tried again.
-- `tier_cap` is the tier the submission's rows were capped at because tier A was not
-- vouched for by a trusted signature (NULL: not capped); `trust` says why.
CREATE TABLE submissions (
    digest       VARCHAR PRIMARY KEY,                  -- sha256 of the submission's listing
    kind         VARCHAR NOT NULL CHECK (kind IN ('results', 'document')),
    state        VARCHAR NOT NULL CHECK (state IN ('applied', 'quarantined')),
    stored_id    VARCHAR,                              -- the run id or document id it stored
    inserted     BOOLEAN NOT NULL,                     -- false: its run was already stored
    tier_cap     VARCHAR CHECK (tier_cap IN ('A', 'B', 'C')),
    trust        VARCHAR NOT NULL,                     -- the signature verdict
    signed_by    VARCHAR,                              -- key id (sha256 of the public key)
    reason       VARCHAR,                              -- quarantined: the located reason
    store_url    VARCHAR NOT NULL,
    submitted_at VARCHAR,                              -- as the submitter recorded it
    applied_at   TIMESTAMP NOT NULL                    -- UTC
);
