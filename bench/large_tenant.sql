-- A tenant made large directly in the database (the data-scale bench, QueryPlanTests): for
-- the tenant named {tenant}, {properties} properties of one floor each, five rooms a floor and
-- {panoramas} panoramas a property, spread over its rooms, a share link a property, a
-- finished upload every other, and a grant and a revoked token a property (the grants
-- expired or revoked). The same text runs on SQLite and on PostgreSQL; {tenant},
-- {properties}, {panoramas} and {blob} (BLOB or bytea) are replaced before it runs. Rows
-- only: the panoramas have no files (nothing reads them).
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties})
INSERT INTO properties (tenant_id, id, tour_id, name, floor_count, metadata, created_at, updated_at)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-p-' || i, 'fill-t-{tenant}-' || i, 'Filler ' || i, 1, '{}',
       '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties})
INSERT INTO floors (tenant_id, id, property_id, number, name, plan_revision, structure)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-f-' || i, 'fill-p-' || i, 0, NULL, 1, '{"walls":4}' FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties} * 5)
INSERT INTO rooms (tenant_id, id, floor_id, name, outline, height, capture, position)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-r-' || i, 'fill-f-' || ((i - 1) / 5 + 1), 'Room',
       '[[0,0],[4,0],[4,3],[0,3]]', 2.5, NULL, (i - 1) % 5 FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties} * {panoramas})
INSERT INTO panoramas (tenant_id, id, property_id, floor_id, room_id, content_type, size, sha256, created_at)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-x-' || i, 'fill-p-' || ((i - 1) / {panoramas} + 1),
       'fill-f-' || ((i - 1) / {panoramas} + 1), 'fill-r-' || (((i - 1) / {panoramas}) * 5 + (i - 1) % 5 + 1),
       'image/jpeg', 1000, '00', '2026-01-01T00:00:00.000Z' FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties})
INSERT INTO shares (tenant_id, id, property_id, secret_hash, created_at, expires_at)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-s-' || i, 'fill-p-' || i, CAST('fill-s-{tenant}-' || i AS {blob}),
       '2026-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z' FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 2 FROM n WHERE i + 2 <= {properties})
INSERT INTO uploads (tenant_id, id, panorama_id, floor_id, room_id, content_type, length, "offset", declared_sha256, metadata, state, created_at, expires_at)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-u-' || i, 'fill-x-' || i, 'fill-f-' || i, NULL, 'image/jpeg', 1000, 1000, NULL, '',
       'finished', '2026-01-01T00:00:00.000Z', 4102444800 FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties})
INSERT INTO grants (tenant_id, id, token_hash, scopes, created_at, expires_at, revoked_at)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-g-' || i, CAST('fill-g-{tenant}-' || i AS {blob}), 'capture',
       '2026-01-01T00:00:00.000Z', CASE WHEN i % 2 = 0 THEN 4102444800 ELSE 1767225600 END,
       CASE WHEN i % 2 = 0 THEN '2026-01-02T00:00:00.000Z' END FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties})
INSERT INTO grant_properties (tenant_id, grant_id, property_id)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), 'fill-g-' || i, 'fill-p-' || i FROM n;

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {properties})
INSERT INTO tokens (tenant_id, token_hash, created_at, revoked_at)
SELECT (SELECT id FROM tenants WHERE name = '{tenant}'), CAST('fill-k-{tenant}-' || i AS {blob}), '2026-01-01T00:00:00.000Z',
       '2026-01-02T00:00:00.000Z' FROM n;
