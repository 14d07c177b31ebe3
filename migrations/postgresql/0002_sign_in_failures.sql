-- Failed viewer sign-ins by client address (its bytes), in the database so that every daemon
-- sharing it applies one limit together (behind N daemons a client once had N times the tries)
-- and a restart forgets none. Times are Unix seconds; each new failure prunes the rows that
-- have left the window. (SQLite's migration 0005.)
CREATE TABLE sign_in_failures (
    address BYTEA NOT NULL,
    failed_at BIGINT NOT NULL
);

CREATE INDEX sign_in_failures_by_address ON sign_in_failures (address, failed_at);
CREATE INDEX sign_in_failures_by_time ON sign_in_failures (failed_at);
