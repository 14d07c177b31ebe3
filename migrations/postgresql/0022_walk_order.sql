-- The order a tour's walk takes a room's panoramas in (SQLite's migration 0025).
ALTER TABLE panoramas ADD COLUMN walk_order BIGINT;
ALTER TABLE panoramas ADD COLUMN captured_at TEXT;
