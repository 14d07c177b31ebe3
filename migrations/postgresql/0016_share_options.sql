-- A share link's label and whether it offers the originals (SQLite's migration 0019).
ALTER TABLE shares ADD COLUMN label TEXT;
ALTER TABLE shares ADD COLUMN offers_originals INTEGER NOT NULL DEFAULT 0;
