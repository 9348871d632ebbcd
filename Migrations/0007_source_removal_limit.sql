-- The removal guard: how many cached rows one replace sync may remove, as "N" rows or "P%" of
-- the cached rows. NULL is the default, 50%.
ALTER TABLE sources ADD COLUMN max_delete TEXT;
