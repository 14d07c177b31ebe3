-- Properties whose tour changed and whose `tour.changed` event is still to come: it comes once
-- nothing more has changed for tourChangedQuietSeconds after `changed_at` (Unix seconds, the
-- last change). The daemon that deletes the row writes the event, in the same transaction.
CREATE TABLE tour_changes (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    property_id TEXT NOT NULL,
    changed_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, property_id)
) WITHOUT ROWID;
CREATE INDEX tour_changes_by_time ON tour_changes (changed_at);
