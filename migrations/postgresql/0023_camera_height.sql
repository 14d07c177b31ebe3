-- How high above its floor each panorama's camera was (SQLite's migration 0026).
ALTER TABLE panoramas ADD COLUMN camera_height DOUBLE PRECISION;
ALTER TABLE uploads ADD COLUMN camera_height DOUBLE PRECISION;
