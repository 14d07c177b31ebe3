-- What happened to a tenant's tours, written in the same transaction as the change it
-- describes (an outbox): the feed (GET /v1/events) reads it in order. `id` counts per tenant;
-- it is taken from the tenant's row (`last_event_id`), whose update holds the tenant's writes
-- in line until commit, so ids become visible in order and a cursor never passes one that
-- is still to commit. `data` is a JSON object. Kept for eventRetentionDays.
ALTER TABLE tenants ADD COLUMN last_event_id INTEGER NOT NULL DEFAULT 0;
CREATE TABLE events (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    id INTEGER NOT NULL,
    type TEXT NOT NULL,
    property_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;
CREATE INDEX events_by_time ON events (created_at);
