-- The deployment's webhook key as its first daemon read it (docs/scale-out.md, "One key for
-- every daemon"): an HMAC of a fixed text under the key, never the key. A daemon reading
-- another key refuses to start: it could neither open the endpoints' secrets nor resume the
-- uploads the others began.
ALTER TABLE deployment ADD COLUMN key_check TEXT;
