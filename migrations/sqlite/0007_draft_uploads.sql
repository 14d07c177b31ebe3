-- Uploads of the IETF resumable-upload draft beside tus's, in the same table. A draft upload
-- may not know its length until the client says it is complete: `length` then holds the most
-- it may reach (maxPanoramaBytes, what the tenant's quota reserves) and `length_known` is 0.
-- A draft upload is complete only when the client says so, never at its length alone:
-- `awaits_completion` is 1 until a completing request's bytes are all durable (tus rows: 0,
-- complete at their length).
ALTER TABLE uploads ADD COLUMN length_known INTEGER NOT NULL DEFAULT 1;
ALTER TABLE uploads ADD COLUMN awaits_completion INTEGER NOT NULL DEFAULT 0;
