-- Whether a share link offers its tour's floor plans as a PDF to download (1), or not (0, the
-- default, and so for every older link).
ALTER TABLE shares ADD COLUMN offers_floor_plans INTEGER NOT NULL DEFAULT 0;
