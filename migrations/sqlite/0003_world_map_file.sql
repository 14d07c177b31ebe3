-- A world map's file gets a fresh name each time one is stored (<floorId>.<random>), so the
-- new file is in place before the row that points at it is committed and the old one is
-- removed only after: a replaced map is never overwritten in place. NULL for maps stored
-- before this migration, whose file is named by the floor id.
ALTER TABLE floors ADD COLUMN world_map_file TEXT;
