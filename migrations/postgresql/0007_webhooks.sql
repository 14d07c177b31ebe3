-- Webhook endpoints and their delivery log (SQLite's migration 0010, which says what each
-- column holds).
CREATE TABLE webhooks (
    tenant_id BIGINT NOT NULL REFERENCES tenants (id),
    id TEXT NOT NULL,
    url TEXT NOT NULL,
    event_types TEXT NOT NULL,
    secret BYTEA NOT NULL,
    created_at TEXT NOT NULL,
    after_event_id BIGINT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL DEFAULT 0,
    failing_since BIGINT,
    disabled_at TEXT,
    leased_until BIGINT NOT NULL DEFAULT 0,
    deliveries_logged BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX webhooks_due ON webhooks (next_attempt_at) WHERE disabled_at IS NULL;
CREATE TABLE webhook_deliveries (
    tenant_id BIGINT NOT NULL,
    webhook_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    event_id BIGINT NOT NULL,
    attempt INTEGER NOT NULL,
    status INTEGER,
    error TEXT,
    latency_ms BIGINT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, webhook_id, seq),
    FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
);
