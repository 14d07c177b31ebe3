-- When a webhook delivery last began, per endpoint and per tenant (SQLite's migration 0013).
ALTER TABLE webhooks ADD COLUMN served_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tenants ADD COLUMN webhooks_served_at BIGINT NOT NULL DEFAULT 0;
