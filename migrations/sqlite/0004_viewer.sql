-- The tour viewer's sign-ins and share links. Like tokens, both are stored only as the
-- SHA-256 of the secret the browser holds; a database read never yields a usable secret.
-- Times are RFC 3339 UTC text of one fixed width, so they compare as text.

-- A signed-in browser: its cookie's hash, the bearer token it signed in with (a revoked token
-- ends its sessions at once), and the CSRF token its forms carry.
CREATE TABLE web_sessions (
    cookie_hash BLOB PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    token_id INTEGER NOT NULL REFERENCES tokens (id),
    csrf TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
) WITHOUT ROWID;

-- Share links (docs/api.md "Sharing a tour"): one property's tour, read-only, until expires_at. A
-- revoked link's row is deleted; the links of a deleted property go with it.
CREATE TABLE shares (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    id TEXT NOT NULL,
    property_id TEXT NOT NULL,
    secret_hash BLOB NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, property_id) REFERENCES properties (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE INDEX shares_by_property ON shares (tenant_id, property_id, expires_at);
