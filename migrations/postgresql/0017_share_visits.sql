-- Who looked at a share link, without tracking anyone (SQLite's migration 0020).
CREATE TABLE visitor_salts (
    day TEXT PRIMARY KEY,
    salt BYTEA NOT NULL
);

CREATE TABLE share_visits (
    tenant_id BIGINT NOT NULL,
    share_id TEXT NOT NULL,
    id TEXT NOT NULL,
    day TEXT NOT NULL,
    visitor BYTEA NOT NULL,
    started_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, share_id, id),
    FOREIGN KEY (tenant_id, share_id) REFERENCES shares (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX share_visits_by_day ON share_visits (tenant_id, share_id, day, visitor);

CREATE TABLE share_visit_panoramas (
    tenant_id BIGINT NOT NULL,
    share_id TEXT NOT NULL,
    visit_id TEXT NOT NULL,
    panorama_id TEXT NOT NULL,
    milliseconds BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, share_id, visit_id, panorama_id),
    FOREIGN KEY (tenant_id, share_id, visit_id) REFERENCES share_visits (tenant_id, share_id, id) ON DELETE CASCADE
);

ALTER TABLE shares ADD COLUMN viewed_event_at BIGINT;
-- The sweep of expired links (their visits with them), across tenants.
CREATE INDEX shares_by_end ON shares (expires_at);
