-- Every statement of a request path reads through an index that starts with the row it is
-- about, never a tenant's whole range (docs/storage.md "Reads indexed by what they read";
-- Tests/TourServiceTests/QueryPlanTests asks the planner for each). Without statistics,
-- SQLite prefers a WITHOUT ROWID table's primary key (tenant_id, id) searched by the tenant
-- alone over a secondary index that needs a lookup per row: these indexes cover what their
-- statements read, so they win whatever the statistics say.

-- A property's status: its panoramas' count and bytes, from the index alone.
DROP INDEX panoramas_by_property;
CREATE INDEX panoramas_by_property ON panoramas (tenant_id, property_id, size);

-- A tenant's unfinished uploads (its quota): only those receiving, at most
-- maxUnfinishedUploadsPerTenant of them.
CREATE INDEX uploads_receiving_by_tenant ON uploads (tenant_id, expires_at, length) WHERE state = 'receiving';

-- Expired shares and sessions, removed as they are met.
CREATE INDEX shares_by_expiry ON shares (tenant_id, expires_at);
CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at);

-- The viewer's property list: a page by name walks the index in order and stops at its end.
CREATE INDEX properties_by_name ON properties (tenant_id, name COLLATE NOCASE, id);
