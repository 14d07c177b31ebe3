-- A link's totals kept on its row (SQLite's migration 0022).
ALTER TABLE shares ADD COLUMN views BIGINT NOT NULL DEFAULT 0;
ALTER TABLE shares ADD COLUMN visitors BIGINT NOT NULL DEFAULT 0;
ALTER TABLE shares ADD COLUMN milliseconds BIGINT NOT NULL DEFAULT 0;
UPDATE shares SET
    views = (SELECT count(*) FROM share_visits WHERE share_visits.tenant_id = shares.tenant_id AND share_visits.share_id = shares.id),
    visitors = (SELECT count(DISTINCT visitor) FROM share_visits WHERE share_visits.tenant_id = shares.tenant_id AND share_visits.share_id = shares.id),
    milliseconds = (SELECT coalesce(sum(milliseconds), 0) FROM share_visit_panoramas
                    WHERE share_visit_panoramas.tenant_id = shares.tenant_id AND share_visit_panoramas.share_id = shares.id);
