-- A tenant's branding on its share links (SQLite's migration 0021).
CREATE TABLE brandings (
    tenant_id BIGINT PRIMARY KEY REFERENCES tenants (id),
    name TEXT,
    accent TEXT,
    contact TEXT NOT NULL DEFAULT '[]',
    floor_names TEXT NOT NULL DEFAULT 'uk',
    logo BYTEA,
    logo_width BIGINT,
    logo_height BIGINT,
    updated_at TEXT NOT NULL
);

ALTER TABLE shares ADD COLUMN branded BIGINT NOT NULL DEFAULT 1;
ALTER TABLE floors ADD COLUMN plan_updated_at TEXT;
