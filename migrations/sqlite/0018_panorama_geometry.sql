-- What a panorama's own file says of how it is drawn (docs/api.md "Panorama": its Photo
-- Sphere XMP projection, crop and heading, its EXIF orientation), as the JSON of
-- PanoramaFileGeometry, read when it is processed; NULL until then, and for panoramas
-- processed before this migration.
ALTER TABLE panoramas ADD COLUMN geometry TEXT;
