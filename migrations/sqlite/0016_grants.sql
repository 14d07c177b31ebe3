-- Grants (docs/security.md "Grants"): a token for one job on named properties, made over HTTP
-- by the tenant, stored only as its SHA-256, with a lifetime; revoked at once on every daemon.
-- A revoked grant's row stays while an upload names it: its uploads' capabilities end with it.
CREATE TABLE grants (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    id TEXT NOT NULL,
    token_hash BLOB NOT NULL UNIQUE,
    scopes TEXT NOT NULL,              -- space-separated: "capture", "read"
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL,       -- Unix seconds
    revoked_at TEXT,
    PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;
CREATE INDEX grants_by_expiry ON grants (tenant_id, expires_at);
-- The sweep of expired grants, across tenants.
CREATE INDEX grants_by_end ON grants (expires_at);

-- The properties a grant names, and those its capture created (they join it).
CREATE TABLE grant_properties (
    tenant_id INTEGER NOT NULL,
    grant_id TEXT NOT NULL,
    property_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, grant_id, property_id),
    FOREIGN KEY (tenant_id, grant_id) REFERENCES grants (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

-- The grant whose holder began an upload (NULL: a tenant token): revoking it ends the
-- upload's capability URL.
ALTER TABLE uploads ADD COLUMN grant_id TEXT;
CREATE INDEX uploads_by_grant ON uploads (tenant_id, grant_id);

-- A tenant's tokens, listed over HTTP (`/v1/tokens`), and its unrevoked ones counted (at
-- most tokensPerTenant made over HTTP).
CREATE INDEX tokens_by_tenant ON tokens (tenant_id, id);
CREATE INDEX tokens_live_by_tenant ON tokens (tenant_id) WHERE revoked_at IS NULL;
