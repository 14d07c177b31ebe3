-- What an agent manages of a share link (docs/api.md "Sharing a tour"): its label, and whether
-- its visitors may fetch the panoramas' full-size images (1) or previews and tiles only (0, the
-- default, and so for every older link).
ALTER TABLE shares ADD COLUMN label TEXT;
ALTER TABLE shares ADD COLUMN offers_originals INTEGER NOT NULL DEFAULT 0;
