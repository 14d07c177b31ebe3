-- Where a panorama was taken on its floor's plan (docs/api.md "Panorama"): x and y in metres,
-- heading in degrees in [0, 360); null when the capture did not say (every older panorama).
-- An unfinished upload keeps what its creation said until it becomes its panorama.
ALTER TABLE panoramas ADD COLUMN x REAL;
ALTER TABLE panoramas ADD COLUMN y REAL;
ALTER TABLE panoramas ADD COLUMN heading REAL;
ALTER TABLE uploads ADD COLUMN x REAL;
ALTER TABLE uploads ADD COLUMN y REAL;
ALTER TABLE uploads ADD COLUMN heading REAL;
