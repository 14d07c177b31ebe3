-- The deployment this database is (docs/scale-out.md, "Which store is whose"): an id made by
-- its first start and written into the blob store it claims, so that only this database ever
-- removes anything from that store. One row.
CREATE TABLE deployment (
    singleton INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
    id TEXT NOT NULL
);
