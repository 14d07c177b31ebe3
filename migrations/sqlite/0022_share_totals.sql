-- A link's totals kept on its row, added to by each opening and beacon in their own write, so
-- that the link list reads them without walking every visit of every link it shows.
ALTER TABLE shares ADD COLUMN views INTEGER NOT NULL DEFAULT 0;
ALTER TABLE shares ADD COLUMN visitors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE shares ADD COLUMN milliseconds INTEGER NOT NULL DEFAULT 0;
UPDATE shares SET
    views = (SELECT count(*) FROM share_visits WHERE share_visits.tenant_id = shares.tenant_id AND share_visits.share_id = shares.id),
    visitors = (SELECT count(DISTINCT visitor) FROM share_visits WHERE share_visits.tenant_id = shares.tenant_id AND share_visits.share_id = shares.id),
    milliseconds = (SELECT coalesce(sum(milliseconds), 0) FROM share_visit_panoramas
                    WHERE share_visit_panoramas.tenant_id = shares.tenant_id AND share_visit_panoramas.share_id = shares.id);
