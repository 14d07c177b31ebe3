-- Who looked at a share link, without tracking anyone (docs/security.md "Share statistics").
-- A visit is one opening of the link; its visitor is a keyed hash of the client's address and
-- user agent under the day's salt, which is thrown away when the day ends: no address, user
-- agent or cookie is stored, and two days' visitors cannot be linked. Visits go with their link.
CREATE TABLE visitor_salts (
    day TEXT PRIMARY KEY,              -- UTC, YYYY-MM-DD: only today's row is kept
    salt BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE share_visits (
    tenant_id INTEGER NOT NULL,
    share_id TEXT NOT NULL,
    id TEXT NOT NULL,                  -- random: the viewer's beacons name it
    day TEXT NOT NULL,                 -- UTC, YYYY-MM-DD
    visitor BLOB NOT NULL,             -- HMAC-SHA256(day's salt, address, user agent)
    started_at INTEGER NOT NULL,       -- Unix seconds
    PRIMARY KEY (tenant_id, share_id, id),
    FOREIGN KEY (tenant_id, share_id) REFERENCES shares (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX share_visits_by_day ON share_visits (tenant_id, share_id, day, visitor);

-- The panoramas a visit showed, and for how long (milliseconds; within the visit's bound).
CREATE TABLE share_visit_panoramas (
    tenant_id INTEGER NOT NULL,
    share_id TEXT NOT NULL,
    visit_id TEXT NOT NULL,
    panorama_id TEXT NOT NULL,
    milliseconds INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, share_id, visit_id, panorama_id),
    FOREIGN KEY (tenant_id, share_id, visit_id) REFERENCES share_visits (tenant_id, share_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

-- When the link's last `share.viewed` event was written (at most one per shareEventMinutes).
ALTER TABLE shares ADD COLUMN viewed_event_at INTEGER;
-- The sweep of expired links (their visits with them), across tenants.
CREATE INDEX shares_by_end ON shares (expires_at);
