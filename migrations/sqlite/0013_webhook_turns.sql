-- When a webhook delivery last began (Unix ms; 0: never), per endpoint and per tenant:
-- endpoints take their turns by them, the tenant served least recently first, so no endpoint
-- with something always due keeps another tenant's, or another endpoint's, turn.
ALTER TABLE webhooks ADD COLUMN served_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tenants ADD COLUMN webhooks_served_at INTEGER NOT NULL DEFAULT 0;
