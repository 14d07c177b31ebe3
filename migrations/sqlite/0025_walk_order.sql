-- The order a tour's walk takes a room's panoramas in: the one the tenant set
-- (`PUT /v1/floors/{floorId}/panorama-order`), else when each was captured (its file's EXIF
-- DateTimeOriginal, local time as the camera wrote it), else when it was uploaded.
ALTER TABLE panoramas ADD COLUMN walk_order INTEGER;
ALTER TABLE panoramas ADD COLUMN captured_at TEXT;
