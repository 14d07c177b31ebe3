-- The deployment's webhook key as its first daemon read it (SQLite's migration 0023).
ALTER TABLE deployment ADD COLUMN key_check TEXT;
