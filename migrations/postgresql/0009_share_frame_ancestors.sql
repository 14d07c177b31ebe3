-- The origins whose pages may frame a share link's embed form (SQLite's migration 0012).
ALTER TABLE shares ADD COLUMN frame_ancestors TEXT NOT NULL DEFAULT '[]';
