-- Tour changes whose `tour.changed` event is still to come (SQLite's migration 0009).
CREATE TABLE tour_changes (
    tenant_id BIGINT NOT NULL REFERENCES tenants (id),
    property_id TEXT NOT NULL,
    changed_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, property_id)
);
CREATE INDEX tour_changes_by_time ON tour_changes (changed_at);
