-- The origins whose pages may frame a share link's embed form (docs/api.md "Sharing a tour"):
-- a JSON array of origins, set when the link is made; empty, as for every older link, frames
-- it nowhere.
ALTER TABLE shares ADD COLUMN frame_ancestors TEXT NOT NULL DEFAULT '[]';
