-- The events outbox (SQLite's migration 0008): ids per tenant taken from the tenant's row,
-- whose row lock holds the tenant's writes in line until commit, so ids become visible in order.
ALTER TABLE tenants ADD COLUMN last_event_id BIGINT NOT NULL DEFAULT 0;
CREATE TABLE events (
    tenant_id BIGINT NOT NULL REFERENCES tenants (id),
    id BIGINT NOT NULL,
    type TEXT NOT NULL,
    property_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX events_by_time ON events (created_at);
