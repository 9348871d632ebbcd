-- Nested data in json records. The scalar fields of nested objects are columns of cached_NAME
-- named with `__` (owner__login): `path` is where a column's value is in the record, as
-- SQLite's JSON functions take it (NULL: the top-level field `name`). Each top-level list
-- field gets a child view, cached_NAME__FIELD, named as cached_NAME is and kept here, with the
-- parent's key, the item's idx, a `value` column when items that are not objects were seen
-- (`scalars`), and a column per scalar field of the object items (record_list_fields).
ALTER TABLE record_fields ADD COLUMN path TEXT;

CREATE TABLE record_lists (
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    list     TEXT NOT NULL,
    position INTEGER NOT NULL,
    view     TEXT NOT NULL UNIQUE COLLATE NOCASE,
    scalars  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source, list)
) STRICT;

CREATE TABLE record_list_fields (
    source   TEXT NOT NULL,
    list     TEXT NOT NULL,
    position INTEGER NOT NULL,
    name     TEXT NOT NULL,
    PRIMARY KEY (source, list, name),
    FOREIGN KEY (source, list) REFERENCES record_lists(source, list) ON DELETE CASCADE
) STRICT;
