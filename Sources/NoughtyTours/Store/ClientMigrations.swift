import NTSQLiteDB

/// The local database's schema, applied by the same migrator as the server's. Embedded: the
/// library ships no files of its own.
enum ClientMigrations {
    static let all = [
        Migration(version: 1, name: "local_store", sql: """
            CREATE TABLE properties (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                floor_count INTEGER NOT NULL,
                metadata TEXT NOT NULL,
                tour_id TEXT,
                created_at TEXT NOT NULL
            );
            CREATE TABLE floors (
                id TEXT PRIMARY KEY,
                property_id TEXT NOT NULL REFERENCES properties (id) ON DELETE CASCADE,
                number INTEGER NOT NULL,
                name TEXT,
                plan_revision INTEGER NOT NULL DEFAULT 0,
                structure TEXT,
                world_map_path TEXT
            );
            CREATE INDEX floors_by_property ON floors (property_id, number);
            CREATE TABLE rooms (
                id TEXT PRIMARY KEY,
                floor_id TEXT NOT NULL REFERENCES floors (id) ON DELETE CASCADE,
                name TEXT,
                outline TEXT NOT NULL,
                height REAL,
                capture TEXT,
                position INTEGER NOT NULL
            );
            CREATE INDEX rooms_by_floor ON rooms (floor_id, position);
            CREATE TABLE panoramas (
                id TEXT PRIMARY KEY,
                property_id TEXT NOT NULL REFERENCES properties (id) ON DELETE CASCADE,
                floor_id TEXT NOT NULL REFERENCES floors (id) ON DELETE CASCADE,
                room_id TEXT,
                path TEXT NOT NULL,
                content_type TEXT NOT NULL,
                size INTEGER NOT NULL,
                sha256 TEXT NOT NULL,
                created_at TEXT NOT NULL
            );
            CREATE INDEX panoramas_by_property ON panoramas (property_id);
            CREATE INDEX panoramas_by_floor ON panoramas (floor_id);
            -- The durable upload queue: every write adds its items in its own transaction.
            -- kind: property, floor, plan, worldmap, panorama, deleteProperty.
            -- state: pending, inflight, done, failed.
            CREATE TABLE queue_items (
                id INTEGER PRIMARY KEY,
                property_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                entity_id TEXT NOT NULL,
                payload TEXT,
                depends_on INTEGER REFERENCES queue_items (id),
                state TEXT NOT NULL DEFAULT 'pending',
                attempts INTEGER NOT NULL DEFAULT 0,
                last_error TEXT,
                created_at TEXT NOT NULL
            );
            CREATE INDEX queue_by_property ON queue_items (property_id, kind, state);
            CREATE INDEX queue_by_state ON queue_items (state, id);
            """),
        // Status reads a property's queue from the index alone; a newScan finds the panoramas
        // of a removed room without scanning them all.
        Migration(version: 2, name: "status_indexes", sql: """
            DROP INDEX queue_by_property;
            CREATE INDEX queue_by_property ON queue_items (property_id, kind, state, attempts);
            CREATE INDEX panoramas_by_room ON panoramas (room_id);
            """),
        // The queue's schedule: an item waiting out its backoff is not sent before not_before
        // (unix seconds).
        Migration(version: 3, name: "queue_schedule", sql: """
            ALTER TABLE queue_items ADD COLUMN not_before REAL NOT NULL DEFAULT 0;
            """),
        // What a new item must follow (the newest item of a floor, by kind) is found by a seek,
        // not by scanning every item of every property.
        Migration(version: 4, name: "queue_by_entity", sql: """
            CREATE INDEX queue_by_entity ON queue_items (entity_id, kind, id);
            """),
        // A failure a host can explain after a restart: last_error holds the error as JSON
        // (StoredError), failed_at when it happened (unix seconds). A floor's world map keeps
        // its digest, so that a download fetches only a map that changed.
        Migration(version: 5, name: "second_version", sql: """
            ALTER TABLE queue_items ADD COLUMN failed_at REAL;
            ALTER TABLE floors ADD COLUMN world_map_sha256 TEXT;
            """),
        // When an item reached the server (unix seconds): an uploaded panorama's file is pruned
        // after the retention a host sets. Items done before this version count from now. The
        // panoramas that still have a file here are indexed apart: pruning reads those alone.
        Migration(version: 6, name: "done_at", sql: """
            ALTER TABLE queue_items ADD COLUMN done_at REAL;
            UPDATE queue_items SET done_at = CAST(strftime('%s', 'now') AS REAL) WHERE state = 'done';
            CREATE INDEX panoramas_with_files ON panoramas (id, path, size) WHERE path != '';
            """),
        // Where a panorama was taken on its floor's plan (PanoramaPosition), when the capture said.
        Migration(version: 7, name: "panorama_positions", sql: """
            ALTER TABLE panoramas ADD COLUMN x REAL;
            ALTER TABLE panoramas ADD COLUMN y REAL;
            ALTER TABLE panoramas ADD COLUMN heading REAL;
            """),
        // How high above its floor the camera was (PanoramaPosition.height), when the capture said.
        Migration(version: 8, name: "camera_height", sql: """
            ALTER TABLE panoramas ADD COLUMN camera_height REAL;
            """),
    ]
}
