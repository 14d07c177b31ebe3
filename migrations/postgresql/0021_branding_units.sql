-- The units a tenant's tours show measurements in (SQLite's migration 0024).
ALTER TABLE brandings ADD COLUMN units TEXT;
