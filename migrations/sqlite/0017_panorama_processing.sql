-- What became of a panorama once stored (docs/api.md "Panorama"): 'processing' until its
-- previews (and tiles, when it gets them) are made, then 'ready', or 'unreadable' with the
-- reason (a `panorama.processed` or `panorama.unreadable` event says which). Panoramas
-- stored before this migration are 'ready': their previews are made when first asked, as
-- they were.
ALTER TABLE panoramas ADD COLUMN state TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('processing', 'ready', 'unreadable'));
ALTER TABLE panoramas ADD COLUMN unreadable_reason TEXT;
-- Those a daemon stopped before it finished them, found by the sweep across tenants.
CREATE INDEX panoramas_processing ON panoramas (created_at) WHERE state = 'processing';
