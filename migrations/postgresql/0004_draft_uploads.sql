-- Uploads of the IETF resumable-upload draft beside tus's (SQLite's migration 0007): a length
-- not known yet reserves the most it may reach, and a draft upload is complete only when the
-- client says so. 0 or 1, as SQLite has them.
ALTER TABLE uploads ADD COLUMN length_known SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE uploads ADD COLUMN awaits_completion SMALLINT NOT NULL DEFAULT 0;
