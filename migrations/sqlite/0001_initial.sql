-- The first schema of toursd's database.
-- Every table below tenants is keyed by (tenant_id, id): ids are made by clients, so two
-- tenants can use the same id without colliding, and one can never probe the other's.

CREATE TABLE tenants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

-- Bearer tokens, stored only as the SHA-256 of the token.
CREATE TABLE tokens (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    token_hash BLOB NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);

CREATE TABLE properties (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    id TEXT NOT NULL,
    tour_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    floor_count INTEGER NOT NULL,
    metadata TEXT NOT NULL,            -- JSON object of strings
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,          -- bumped by every change to the property or what it holds
    PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;

CREATE TABLE floors (
    tenant_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    property_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    name TEXT,
    plan_revision INTEGER NOT NULL DEFAULT 0,
    structure TEXT,                    -- the last applied plan's opaque structure, JSON
    world_map_sha256 TEXT,             -- set while the floor has a saved world map
    world_map_size INTEGER,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, property_id) REFERENCES properties (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX floors_by_property ON floors (tenant_id, property_id, number);

CREATE TABLE rooms (
    tenant_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    floor_id TEXT NOT NULL,
    name TEXT,
    outline TEXT NOT NULL,             -- JSON [[x, y], ...] in metres
    height REAL,
    capture TEXT,                      -- opaque capture output, JSON
    position INTEGER NOT NULL,         -- order on the floor
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, floor_id) REFERENCES floors (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX rooms_by_floor ON rooms (tenant_id, floor_id, position);

-- Applied plans, so that a re-sent planId answers what it answered the first time.
CREATE TABLE plans (
    tenant_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    floor_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    request_sha256 TEXT NOT NULL,      -- another plan under the same id is a conflict
    result TEXT NOT NULL,              -- the Floor answered when it was applied, JSON
    applied_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, floor_id) REFERENCES floors (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE panoramas (
    tenant_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    property_id TEXT NOT NULL,
    floor_id TEXT NOT NULL,
    room_id TEXT,                      -- null: on the floor, in no room
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,              -- lowercase hex of the stored bytes
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, floor_id) REFERENCES floors (tenant_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX panoramas_by_floor ON panoramas (tenant_id, floor_id);
CREATE INDEX panoramas_by_property ON panoramas (tenant_id, property_id);
CREATE INDEX panoramas_by_room ON panoramas (tenant_id, room_id);
