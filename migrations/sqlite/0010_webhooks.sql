-- Webhook endpoints (docs/webhooks.md): each delivers its tenant's events after its cursor
-- (`after_event_id`), one at a time and in order, to `url`, signed with its secret (sealed
-- under the daemon's webhook key: `secret` is nonce, ciphertext and tag). `event_types` is a
-- JSON array (empty: every type). A delivery under way holds `leased_until` (Unix ms), so one
-- daemon at a time delivers an endpoint; a failure sets `next_attempt_at` (Unix ms) by the
-- backoff, and one failing since `failing_since` (Unix s) for webhookRetryHours is disabled.
CREATE TABLE webhooks (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    id TEXT NOT NULL,
    url TEXT NOT NULL,
    event_types TEXT NOT NULL,
    secret BLOB NOT NULL,
    created_at TEXT NOT NULL,
    after_event_id INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    failing_since INTEGER,
    disabled_at TEXT,
    leased_until INTEGER NOT NULL DEFAULT 0,
    deliveries_logged INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;
CREATE INDEX webhooks_due ON webhooks (next_attempt_at) WHERE disabled_at IS NULL;
-- Each endpoint's last attempts (webhookDeliveryLog of them), newest last.
CREATE TABLE webhook_deliveries (
    tenant_id INTEGER NOT NULL,
    webhook_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    status INTEGER,
    error TEXT,
    latency_ms INTEGER NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, webhook_id, seq),
    FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
