-- The units a tenant's tours show measurements in (metric or imperial); NULL: those of its
-- floor naming's country.
ALTER TABLE brandings ADD COLUMN units TEXT;
