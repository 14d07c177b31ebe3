-- Resumable uploads (tus 1.0.0) of panoramas. The partial file is blobs/<tenant>/uploads/<id>;
-- `offset` counts only bytes that are fsynced.
CREATE TABLE uploads (
    tenant_id INTEGER NOT NULL REFERENCES tenants (id),
    id TEXT NOT NULL,
    panorama_id TEXT NOT NULL,
    floor_id TEXT NOT NULL,
    room_id TEXT,
    content_type TEXT NOT NULL,
    length INTEGER NOT NULL,
    "offset" INTEGER NOT NULL DEFAULT 0,
    declared_sha256 TEXT,              -- lowercase hex from Upload-Metadata, checked when complete
    metadata TEXT NOT NULL,            -- Upload-Metadata as sent, echoed by HEAD
    state TEXT NOT NULL CHECK (state IN ('receiving', 'finished')),
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL,       -- Unix seconds
    PRIMARY KEY (tenant_id, id)
) WITHOUT ROWID;
-- At most one unfinished upload per panorama: a re-sent creation finds it.
CREATE UNIQUE INDEX uploads_receiving_by_panorama ON uploads (tenant_id, panorama_id) WHERE state = 'receiving';
CREATE INDEX uploads_by_expiry ON uploads (expires_at);
