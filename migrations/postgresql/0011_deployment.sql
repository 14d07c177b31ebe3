-- The deployment this database is (SQLite's migration 0014).
CREATE TABLE deployment (
    singleton INTEGER NOT NULL PRIMARY KEY CHECK (singleton = 1),
    id TEXT NOT NULL
);
