-- A tenant's branding on its share links (docs/api.md "Branding"): the name visitors read, an
-- accent colour (checked for contrast when set), contact lines, how its floors are named, and
-- a logo (made again from its pixels when set: a JPEG without the file's metadata).
CREATE TABLE brandings (
    tenant_id INTEGER PRIMARY KEY REFERENCES tenants (id),
    name TEXT,
    accent TEXT,                       -- #rrggbb
    contact TEXT NOT NULL DEFAULT '[]', -- a JSON array of lines
    floor_names TEXT NOT NULL DEFAULT 'uk',
    logo BLOB,
    logo_width INTEGER,
    logo_height INTEGER,
    updated_at TEXT NOT NULL
);

-- Whether a share link shows the branding (1) or none of it and no platform name (0: the
-- unbranded form MLS rules ask for).
ALTER TABLE shares ADD COLUMN branded INTEGER NOT NULL DEFAULT 1;
-- When each floor's plan was last applied, for the agent's pages ("Plan updated 3 Dec").
ALTER TABLE floors ADD COLUMN plan_updated_at TEXT;
