-- The search index keeps no copy of its documents' text: search_docs holds it, beside each
-- document's source and key, and FTS5 reads it from there (an external-content table), for
-- snippets and for its own checks. Writing each text once, not into FTS5's own table too,
-- takes about a third off building the index of a million records.
--
-- The index's entries stay as they are: the text moves from FTS5's content table, the index's
-- definition is changed in place, and the table it no longer uses is dropped, all without
-- asking FTS5 to read anything. An index damaged before stays as damaged as it was (`check`
-- names it, `cache reindex` mends it) and never stops the upgrade; a content table already gone
-- leaves the documents without text, which `check` reports and `cache reindex` mends.
ALTER TABLE search_docs ADD COLUMN text TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS search_index_content (id INTEGER PRIMARY KEY, c0);
UPDATE search_docs SET text = coalesce((SELECT c.c0 FROM search_index_content c WHERE c.id = search_docs.id), '');

PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = 'CREATE VIRTUAL TABLE search_index USING fts5(text, content = ''search_docs'', content_rowid = ''id'', tokenize = ''unicode61 remove_diacritics 2'')'
WHERE name = 'search_index';
PRAGMA writable_schema = RESET;
DROP TABLE search_index_content;

-- A document deleted (its row gone, or its source removed) takes the text it was indexed with
-- out of the index.
DROP TRIGGER IF EXISTS search_docs_deleted;
CREATE TRIGGER search_docs_deleted AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_index (search_index, rowid, text) VALUES ('delete', old.id, old.text);
END;
