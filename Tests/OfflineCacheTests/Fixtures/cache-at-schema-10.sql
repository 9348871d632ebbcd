-- made by cache 0.1.0
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations (
    id INTEGER PRIMARY KEY, file TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT;
INSERT INTO schema_migrations VALUES(1,'0001_initial.sql','2026-11-30T18:45:38.451Z');
INSERT INTO schema_migrations VALUES(2,'0002_sync_leases.sql','2026-11-30T18:45:38.452Z');
INSERT INTO schema_migrations VALUES(3,'0003_conditional_requests_and_backoff.sql','2026-11-30T18:45:38.454Z');
INSERT INTO schema_migrations VALUES(4,'0004_change_log.sql','2026-11-30T18:45:38.454Z');
INSERT INTO schema_migrations VALUES(5,'0005_clustered_transactions_and_loads.sql','2026-11-30T18:45:38.456Z');
INSERT INTO schema_migrations VALUES(6,'0006_source_ca_cert.sql','2026-11-30T18:45:38.457Z');
INSERT INTO schema_migrations VALUES(7,'0007_source_removal_limit.sql','2026-11-30T18:45:38.457Z');
INSERT INTO schema_migrations VALUES(8,'0008_source_alert_after.sql','2026-11-30T18:45:38.457Z');
INSERT INTO schema_migrations VALUES(9,'0009_run_ids_never_repeat.sql','2026-11-30T18:45:38.459Z');
INSERT INTO schema_migrations VALUES(10,'0010_generic_json_sources.sql','2026-11-30T18:45:38.464Z');
CREATE TABLE sync_state (
    source          TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    confirmed_at    TEXT,  -- when upstream last confirmed every cached row of the source
    last_success_at TEXT,
    last_attempt_at TEXT,
    last_outcome    TEXT,
    last_error      TEXT,
    next_attempt_at TEXT
, etag TEXT, last_modified TEXT, body_hash TEXT, failures INTEGER NOT NULL DEFAULT 0) STRICT;
INSERT INTO sync_state VALUES('bank','2026-11-30T18:45:38.778Z','2026-11-30T18:45:38.778Z','2026-11-30T18:45:38.832Z','failed','held: would remove 4 of 6 cached transactions (more than the 2 this source allows); nothing was written (run ''cache sync bank --accept-removals'' to apply it)','2026-11-30T18:45:54.346Z',NULL,NULL,'9fe366e72a3a7b53-604',1);
INSERT INTO sync_state VALUES('jokes',NULL,'2026-11-30T18:45:38.555Z','2026-11-30T18:45:38.555Z','updated',NULL,NULL,NULL,NULL,'ac0f0ea0709c3a91-1304',0);
INSERT INTO sync_state VALUES('items','2026-11-30T18:45:38.788Z','2026-11-30T18:45:38.788Z','2026-11-30T18:45:38.788Z','updated',NULL,NULL,NULL,NULL,'575be63c5d56e6ab-63',0);
INSERT INTO sync_state VALUES('Jokes','2026-11-30T18:45:38.787Z','2026-11-30T18:45:38.787Z','2026-11-30T18:45:38.787Z','updated',NULL,NULL,NULL,NULL,'871b2fe62228500b-42',0);
INSERT INTO sync_state VALUES('down',NULL,NULL,'2026-11-30T18:45:38.545Z','failed','HTTP 404 from http://127.0.0.1:39061/jokes/nowhere','2026-11-30T18:45:53.545Z',NULL,NULL,NULL,1);
CREATE TABLE accounts (
    source  TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    balance REAL NOT NULL,
    seen_at TEXT NOT NULL
) STRICT;
INSERT INTO accounts VALUES('bank','Jane Appleseed',1200.5,'2026-11-30T18:45:38.778Z');
CREATE TABLE jokes (
    source    TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    id        INTEGER NOT NULL,
    type      TEXT NOT NULL,
    setup     TEXT NOT NULL,
    punchline TEXT NOT NULL,
    seen_at   TEXT NOT NULL,
    PRIMARY KEY (source, id)
) STRICT;
INSERT INTO jokes VALUES('jokes',69,'general','I can''t tell if i like this blender...','It keeps giving me mixed results.','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',292,'general','Where does Napoleon keep his armies?','In his sleevies.','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',434,'general','Why did the cookie go to the doctor?',' Because it was feeling crumbly.','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',411,'programming','Why don''t React developers like nature?','They prefer the virtual DOM.','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',392,'general','Did you hear about the Viking who was reincarnated?','He was Bjorn again','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',33,'knock-knock',replace('Knock knock. \n Who''s there? \n Opportunity.','\n',char(10)),'That is impossible. Opportunity doesn’t come knocking twice!','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',131,'general','How do you tell the difference between a crocodile and an alligator?','You will see one later and one in a while.','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',61,'general','What do you call sad coffee?','Despresso.','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',254,'general','What kind of magic do cows believe in?','MOODOO.','2026-11-30T18:45:38.555Z');
INSERT INTO jokes VALUES('jokes',390,'programming','Where did the API go to eat?','To the RESTaurant.','2026-11-30T18:45:38.555Z');
CREATE TABLE sync_leases (
    source       TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    holder_pid   INTEGER NOT NULL,
    holder_token TEXT NOT NULL,
    acquired_at  TEXT NOT NULL,
    expires_at   TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS "transactions" (
    id      TEXT NOT NULL,
    source  TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    date    TEXT NOT NULL,
    vendor  TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    type    INTEGER NOT NULL,
    amount  REAL NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (source, date, vendor, ordinal)
) STRICT, WITHOUT ROWID;
INSERT INTO transactions VALUES('c615efbe32525bab','bank','2026-11-27T09:00:00Z','Payroll',0,0,2000.0,'2026-11-30T18:45:38.548Z');
INSERT INTO transactions VALUES('edf505d21b6a43a7','bank','2026-11-28T08:15:14Z','Starbucks',0,1,7.2300000000000004263,'2026-11-30T18:45:38.548Z');
INSERT INTO transactions VALUES('6414810974a2879d','bank','2026-11-28T18:02:40Z','Whole Foods',0,1,84.099999999999994317,'2026-11-30T18:45:38.548Z');
INSERT INTO transactions VALUES('06f289f0e5e6ac4f','bank','2026-11-29T22:41:09Z','Uber',0,1,25.499999999999999999,'2026-11-30T18:45:38.778Z');
INSERT INTO transactions VALUES('4739d1f2f808e91f','bank','2026-11-30T07:30:00Z','Refund: Amazon',0,0,19.989999999999998436,'2026-11-30T18:45:38.548Z');
INSERT INTO transactions VALUES('cd894b6c7d2cd1ea','bank','2026-11-30T09:10:00Z','Lyft',0,1,12.0,'2026-11-30T18:45:38.778Z');
CREATE TABLE IF NOT EXISTS "sync_runs" (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    source      TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('updated', 'unchanged', 'failed', 'skipped')),
    inserted    INTEGER NOT NULL DEFAULT 0,
    updated     INTEGER NOT NULL DEFAULT 0,
    deleted     INTEGER NOT NULL DEFAULT 0,
    http_status INTEGER,
    bytes       INTEGER,
    error       TEXT,
    note        TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO sync_runs VALUES(1,'down','2026-11-30T18:45:38.526Z','2026-11-30T18:45:38.545Z','failed',0,0,0,404,NULL,'HTTP 404 from http://127.0.0.1:39061/jokes/nowhere',NULL,1);
INSERT INTO sync_runs VALUES(2,'bank','2026-11-30T18:45:38.526Z','2026-11-30T18:45:38.554Z','updated',6,0,0,200,612,NULL,NULL,1);
INSERT INTO sync_runs VALUES(3,'jokes','2026-11-30T18:45:38.546Z','2026-11-30T18:45:38.555Z','updated',10,0,0,200,1304,NULL,NULL,1);
INSERT INTO sync_runs VALUES(4,'Jokes','2026-11-30T18:45:38.526Z','2026-11-30T18:45:38.562Z','updated',120,0,0,200,11326,NULL,NULL,1);
INSERT INTO sync_runs VALUES(5,'items','2026-11-30T18:45:38.526Z','2026-11-30T18:45:38.566Z','updated',120,0,0,200,11158,NULL,NULL,1);
INSERT INTO sync_runs VALUES(6,'bank','2026-11-30T18:45:38.767Z','2026-11-30T18:45:38.779Z','updated',1,1,1,200,604,NULL,NULL,1);
INSERT INTO sync_runs VALUES(7,'Jokes','2026-11-30T18:45:38.767Z','2026-11-30T18:45:38.788Z','updated',1,1,1,200,11291,NULL,NULL,1);
INSERT INTO sync_runs VALUES(8,'items','2026-11-30T18:45:38.767Z','2026-11-30T18:45:38.790Z','updated',1,1,1,200,11123,NULL,NULL,1);
INSERT INTO sync_runs VALUES(9,'bank','2026-11-30T18:45:38.820Z','2026-11-30T18:45:38.832Z','failed',0,0,0,200,266,'held: would remove 4 of 6 cached transactions (more than the 2 this source allows); nothing was written (run ''cache sync bank --accept-removals'' to apply it)',NULL,1);
CREATE TABLE IF NOT EXISTS "sources" (
    name          TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('account', 'jokes', 'json')),
    url           TEXT NOT NULL,
    mode          TEXT NOT NULL CHECK (mode IN ('replace', 'merge')),
    ttl_s         INTEGER NOT NULL CHECK (ttl_s > 0),
    headers       TEXT NOT NULL DEFAULT '[]',  -- JSON array of "Name: value" strings
    token_env     TEXT,                        -- the variable's name; its value is never stored
    max_bytes     INTEGER,
    created_at    TEXT NOT NULL,
    ca_cert       TEXT,
    max_delete    TEXT,
    alert_after_s INTEGER CHECK (alert_after_s > 0),
    rows_path     TEXT,
    key_fields    TEXT,
    next_page     TEXT,
    next_param    TEXT,
    max_pages     INTEGER CHECK (max_pages > 0)
) STRICT;
INSERT INTO sources VALUES('bank','account','http://127.0.0.1:39061/account','replace',900,'[]',NULL,NULL,'2026-11-30T18:45:38.465Z',NULL,'2',NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO sources VALUES('jokes','jokes','http://127.0.0.1:39061/jokes/ten','merge',900,'[]',NULL,NULL,'2026-11-30T18:45:38.478Z',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
INSERT INTO sources VALUES('items','json','http://127.0.0.1:39061/api/items?per_page=40','replace',900,'[]',NULL,NULL,'2026-11-30T18:45:38.490Z',NULL,NULL,NULL,'$','id','link',NULL,100);
INSERT INTO sources VALUES('Jokes','json','http://127.0.0.1:39061/api/paged?per_page=100','replace',900,'[]',NULL,NULL,'2026-11-30T18:45:38.500Z',NULL,NULL,NULL,'$.results','id','$.next',NULL,100);
INSERT INTO sources VALUES('down','jokes','http://127.0.0.1:39061/jokes/nowhere','merge',900,'[]',NULL,NULL,'2026-11-30T18:45:38.511Z',NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
CREATE TABLE IF NOT EXISTS "changes" (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    row_kind TEXT NOT NULL CHECK (row_kind IN ('account', 'transaction', 'joke', 'record')),
    row_id   TEXT NOT NULL,
    change   TEXT NOT NULL CHECK (change IN ('inserted', 'updated', 'removed')),
    before   TEXT,  -- JSON of the row's fields before (updated, removed)
    after    TEXT   -- JSON of the row's fields after (inserted, updated)
) STRICT;
INSERT INTO changes VALUES(1,2,'bank','account','bank','inserted',NULL,'{"name": "Jane Appleseed", "balance": 1234.56}');
INSERT INTO changes VALUES(2,6,'bank','account','bank','updated','{"name": "Jane Appleseed", "balance": 1234.56}','{"name": "Jane Appleseed", "balance": 1200.5}');
INSERT INTO changes VALUES(3,6,'bank','transaction','cd894b6c7d2cd1ea','inserted',NULL,'{"date":"2026-11-30T09:10:00Z","vendor":"Lyft","type":1,"amount":12.0}');
INSERT INTO changes VALUES(4,6,'bank','transaction','06f289f0e5e6ac4f','updated','{"date":"2026-11-29T22:41:09Z","vendor":"Uber","type":1,"amount":23.5}','{"date":"2026-11-29T22:41:09Z","vendor":"Uber","type":1,"amount":25.5}');
INSERT INTO changes VALUES(5,6,'bank','transaction','edf504d21b6a41f4','removed','{"date":"2026-11-28T08:15:14Z","vendor":"Starbucks","type":1,"amount":7.23}',NULL);
INSERT INTO changes VALUES(6,7,'Jokes','record','1','updated','{"id":1,"name":"item 1","owner":{"login":"u1"},"price":1.25,"tags":["a","b"]}','{"id":1,"name":"item 1","owner":{"login":"u1"},"price":99.5,"tags":["a","b"]}');
INSERT INTO changes VALUES(7,7,'Jokes','record','500','inserted',NULL,'{"extra":true,"id":500,"name":"new","price":1}');
INSERT INTO changes VALUES(8,7,'Jokes','record','5','removed','{"id":5,"name":"item 5","owner":{"login":"u5"},"price":6.25,"tags":["a","b"]}',NULL);
INSERT INTO changes VALUES(9,8,'items','record','1','updated','{"id":1,"name":"item 1","owner":{"login":"u1"},"price":1.25,"tags":["a","b"]}','{"id":1,"name":"item 1","owner":{"login":"u1"},"price":99.5,"tags":["a","b"]}');
INSERT INTO changes VALUES(10,8,'items','record','500','inserted',NULL,'{"extra":true,"id":500,"name":"new","price":1}');
INSERT INTO changes VALUES(11,8,'items','record','5','removed','{"id":5,"name":"item 5","owner":{"login":"u5"},"price":6.25,"tags":["a","b"]}',NULL);
CREATE TABLE IF NOT EXISTS "loads" (
    run_id   INTEGER NOT NULL REFERENCES sync_runs(id) ON DELETE CASCADE,
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    row_kind TEXT NOT NULL CHECK (row_kind IN ('transaction', 'joke', 'record')),
    rows     INTEGER NOT NULL,
    PRIMARY KEY (run_id, row_kind)
) STRICT;
INSERT INTO loads VALUES(2,'bank','transaction',6);
INSERT INTO loads VALUES(3,'jokes','joke',10);
INSERT INTO loads VALUES(4,'Jokes','record',120);
INSERT INTO loads VALUES(5,'items','record',120);
CREATE TABLE records (
    source  TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    key     TEXT NOT NULL,
    record  TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (source, key)
) STRICT, WITHOUT ROWID;
INSERT INTO records VALUES('Jokes','1','{"id":1,"name":"item 1","owner":{"login":"u1"},"price":99.5,"tags":["a","b"]}','2026-11-30T18:45:38.787Z');
INSERT INTO records VALUES('Jokes','10','{"id":10,"name":"item 10","owner":{"login":"u3"},"price":12.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','100','{"id":100,"name":"item 100","owner":{"login":"u2"},"price":125,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','101','{"id":101,"name":"item 101","owner":{"login":"u3"},"price":126.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','102','{"id":102,"name":"item 102","owner":{"login":"u4"},"price":127.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','103','{"id":103,"name":"item 103","owner":{"login":"u5"},"price":128.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','104','{"id":104,"name":"item 104","owner":{"login":"u6"},"price":130,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','105','{"id":105,"name":"item 105","owner":{"login":"u0"},"price":131.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','106','{"id":106,"name":"item 106","owner":{"login":"u1"},"price":132.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','107','{"id":107,"name":"item 107","owner":{"login":"u2"},"price":133.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','108','{"id":108,"name":"item 108","owner":{"login":"u3"},"price":135,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','109','{"id":109,"name":"item 109","owner":{"login":"u4"},"price":136.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','11','{"id":11,"name":"item 11","owner":{"login":"u4"},"price":13.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','110','{"id":110,"name":"item 110","owner":{"login":"u5"},"price":137.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','111','{"id":111,"name":"item 111","owner":{"login":"u6"},"price":138.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','112','{"id":112,"name":"item 112","owner":{"login":"u0"},"price":140,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','113','{"id":113,"name":"item 113","owner":{"login":"u1"},"price":141.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','114','{"id":114,"name":"item 114","owner":{"login":"u2"},"price":142.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','115','{"id":115,"name":"item 115","owner":{"login":"u3"},"price":143.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','116','{"id":116,"name":"item 116","owner":{"login":"u4"},"price":145,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','117','{"id":117,"name":"item 117","owner":{"login":"u5"},"price":146.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','118','{"id":118,"name":"item 118","owner":{"login":"u6"},"price":147.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','119','{"id":119,"name":"item 119","owner":{"login":"u0"},"price":148.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','12','{"id":12,"name":"item 12","owner":{"login":"u5"},"price":15,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','120','{"id":120,"name":"item 120","owner":{"login":"u1"},"price":150,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','13','{"id":13,"name":"item 13","owner":{"login":"u6"},"price":16.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','14','{"id":14,"name":"item 14","owner":{"login":"u0"},"price":17.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','15','{"id":15,"name":"item 15","owner":{"login":"u1"},"price":18.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','16','{"id":16,"name":"item 16","owner":{"login":"u2"},"price":20,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','17','{"id":17,"name":"item 17","owner":{"login":"u3"},"price":21.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','18','{"id":18,"name":"item 18","owner":{"login":"u4"},"price":22.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','19','{"id":19,"name":"item 19","owner":{"login":"u5"},"price":23.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','2','{"id":2,"name":"item 2","owner":{"login":"u2"},"price":2.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','20','{"id":20,"name":"item 20","owner":{"login":"u6"},"price":25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','21','{"id":21,"name":"item 21","owner":{"login":"u0"},"price":26.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','22','{"id":22,"name":"item 22","owner":{"login":"u1"},"price":27.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','23','{"id":23,"name":"item 23","owner":{"login":"u2"},"price":28.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','24','{"id":24,"name":"item 24","owner":{"login":"u3"},"price":30,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','25','{"id":25,"name":"item 25","owner":{"login":"u4"},"price":31.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','26','{"id":26,"name":"item 26","owner":{"login":"u5"},"price":32.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','27','{"id":27,"name":"item 27","owner":{"login":"u6"},"price":33.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','28','{"id":28,"name":"item 28","owner":{"login":"u0"},"price":35,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','29','{"id":29,"name":"item 29","owner":{"login":"u1"},"price":36.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','3','{"id":3,"name":"item 3","owner":{"login":"u3"},"price":3.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','30','{"id":30,"name":"item 30","owner":{"login":"u2"},"price":37.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','31','{"id":31,"name":"item 31","owner":{"login":"u3"},"price":38.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','32','{"id":32,"name":"item 32","owner":{"login":"u4"},"price":40,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','33','{"id":33,"name":"item 33","owner":{"login":"u5"},"price":41.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','34','{"id":34,"name":"item 34","owner":{"login":"u6"},"price":42.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','35','{"id":35,"name":"item 35","owner":{"login":"u0"},"price":43.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','36','{"id":36,"name":"item 36","owner":{"login":"u1"},"price":45,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','37','{"id":37,"name":"item 37","owner":{"login":"u2"},"price":46.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','38','{"id":38,"name":"item 38","owner":{"login":"u3"},"price":47.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','39','{"id":39,"name":"item 39","owner":{"login":"u4"},"price":48.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','4','{"id":4,"name":"item 4","owner":{"login":"u4"},"price":5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','40','{"id":40,"name":"item 40","owner":{"login":"u5"},"price":50,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','41','{"id":41,"name":"item 41","owner":{"login":"u6"},"price":51.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','42','{"id":42,"name":"item 42","owner":{"login":"u0"},"price":52.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','43','{"id":43,"name":"item 43","owner":{"login":"u1"},"price":53.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','44','{"id":44,"name":"item 44","owner":{"login":"u2"},"price":55,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','45','{"id":45,"name":"item 45","owner":{"login":"u3"},"price":56.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','46','{"id":46,"name":"item 46","owner":{"login":"u4"},"price":57.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','47','{"id":47,"name":"item 47","owner":{"login":"u5"},"price":58.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','48','{"id":48,"name":"item 48","owner":{"login":"u6"},"price":60,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','49','{"id":49,"name":"item 49","owner":{"login":"u0"},"price":61.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','50','{"id":50,"name":"item 50","owner":{"login":"u1"},"price":62.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','500','{"extra":true,"id":500,"name":"new","price":1}','2026-11-30T18:45:38.787Z');
INSERT INTO records VALUES('Jokes','51','{"id":51,"name":"item 51","owner":{"login":"u2"},"price":63.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','52','{"id":52,"name":"item 52","owner":{"login":"u3"},"price":65,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','53','{"id":53,"name":"item 53","owner":{"login":"u4"},"price":66.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','54','{"id":54,"name":"item 54","owner":{"login":"u5"},"price":67.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','55','{"id":55,"name":"item 55","owner":{"login":"u6"},"price":68.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','56','{"id":56,"name":"item 56","owner":{"login":"u0"},"price":70,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','57','{"id":57,"name":"item 57","owner":{"login":"u1"},"price":71.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','58','{"id":58,"name":"item 58","owner":{"login":"u2"},"price":72.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','59','{"id":59,"name":"item 59","owner":{"login":"u3"},"price":73.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','6','{"id":6,"name":"item 6","owner":{"login":"u6"},"price":7.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','60','{"id":60,"name":"item 60","owner":{"login":"u4"},"price":75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','61','{"id":61,"name":"item 61","owner":{"login":"u5"},"price":76.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','62','{"id":62,"name":"item 62","owner":{"login":"u6"},"price":77.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','63','{"id":63,"name":"item 63","owner":{"login":"u0"},"price":78.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','64','{"id":64,"name":"item 64","owner":{"login":"u1"},"price":80,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','65','{"id":65,"name":"item 65","owner":{"login":"u2"},"price":81.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','66','{"id":66,"name":"item 66","owner":{"login":"u3"},"price":82.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','67','{"id":67,"name":"item 67","owner":{"login":"u4"},"price":83.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','68','{"id":68,"name":"item 68","owner":{"login":"u5"},"price":85,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','69','{"id":69,"name":"item 69","owner":{"login":"u6"},"price":86.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','7','{"id":7,"name":"item 7","owner":{"login":"u0"},"price":8.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','70','{"id":70,"name":"item 70","owner":{"login":"u0"},"price":87.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','71','{"id":71,"name":"item 71","owner":{"login":"u1"},"price":88.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','72','{"id":72,"name":"item 72","owner":{"login":"u2"},"price":90,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','73','{"id":73,"name":"item 73","owner":{"login":"u3"},"price":91.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','74','{"id":74,"name":"item 74","owner":{"login":"u4"},"price":92.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','75','{"id":75,"name":"item 75","owner":{"login":"u5"},"price":93.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','76','{"id":76,"name":"item 76","owner":{"login":"u6"},"price":95,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','77','{"id":77,"name":"item 77","owner":{"login":"u0"},"price":96.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','78','{"id":78,"name":"item 78","owner":{"login":"u1"},"price":97.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','79','{"id":79,"name":"item 79","owner":{"login":"u2"},"price":98.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','8','{"id":8,"name":"item 8","owner":{"login":"u1"},"price":10,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','80','{"id":80,"name":"item 80","owner":{"login":"u3"},"price":100,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','81','{"id":81,"name":"item 81","owner":{"login":"u4"},"price":101.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','82','{"id":82,"name":"item 82","owner":{"login":"u5"},"price":102.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','83','{"id":83,"name":"item 83","owner":{"login":"u6"},"price":103.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','84','{"id":84,"name":"item 84","owner":{"login":"u0"},"price":105,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','85','{"id":85,"name":"item 85","owner":{"login":"u1"},"price":106.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','86','{"id":86,"name":"item 86","owner":{"login":"u2"},"price":107.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','87','{"id":87,"name":"item 87","owner":{"login":"u3"},"price":108.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','88','{"id":88,"name":"item 88","owner":{"login":"u4"},"price":110,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','89','{"id":89,"name":"item 89","owner":{"login":"u5"},"price":111.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','9','{"id":9,"name":"item 9","owner":{"login":"u2"},"price":11.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','90','{"id":90,"name":"item 90","owner":{"login":"u6"},"price":112.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','91','{"id":91,"name":"item 91","owner":{"login":"u0"},"price":113.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','92','{"id":92,"name":"item 92","owner":{"login":"u1"},"price":115,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','93','{"id":93,"name":"item 93","owner":{"login":"u2"},"price":116.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','94','{"id":94,"name":"item 94","owner":{"login":"u3"},"price":117.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','95','{"id":95,"name":"item 95","owner":{"login":"u4"},"price":118.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','96','{"id":96,"name":"item 96","owner":{"login":"u5"},"price":120,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','97','{"id":97,"name":"item 97","owner":{"login":"u6"},"price":121.25,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','98','{"id":98,"name":"item 98","owner":{"login":"u0"},"price":122.5,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('Jokes','99','{"id":99,"name":"item 99","owner":{"login":"u1"},"price":123.75,"tags":["a","b"]}','2026-11-30T18:45:38.560Z');
INSERT INTO records VALUES('items','1','{"id":1,"name":"item 1","owner":{"login":"u1"},"price":99.5,"tags":["a","b"]}','2026-11-30T18:45:38.788Z');
INSERT INTO records VALUES('items','10','{"id":10,"name":"item 10","owner":{"login":"u3"},"price":12.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','100','{"id":100,"name":"item 100","owner":{"login":"u2"},"price":125,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','101','{"id":101,"name":"item 101","owner":{"login":"u3"},"price":126.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','102','{"id":102,"name":"item 102","owner":{"login":"u4"},"price":127.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','103','{"id":103,"name":"item 103","owner":{"login":"u5"},"price":128.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','104','{"id":104,"name":"item 104","owner":{"login":"u6"},"price":130,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','105','{"id":105,"name":"item 105","owner":{"login":"u0"},"price":131.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','106','{"id":106,"name":"item 106","owner":{"login":"u1"},"price":132.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','107','{"id":107,"name":"item 107","owner":{"login":"u2"},"price":133.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','108','{"id":108,"name":"item 108","owner":{"login":"u3"},"price":135,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','109','{"id":109,"name":"item 109","owner":{"login":"u4"},"price":136.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','11','{"id":11,"name":"item 11","owner":{"login":"u4"},"price":13.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','110','{"id":110,"name":"item 110","owner":{"login":"u5"},"price":137.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','111','{"id":111,"name":"item 111","owner":{"login":"u6"},"price":138.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','112','{"id":112,"name":"item 112","owner":{"login":"u0"},"price":140,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','113','{"id":113,"name":"item 113","owner":{"login":"u1"},"price":141.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','114','{"id":114,"name":"item 114","owner":{"login":"u2"},"price":142.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','115','{"id":115,"name":"item 115","owner":{"login":"u3"},"price":143.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','116','{"id":116,"name":"item 116","owner":{"login":"u4"},"price":145,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','117','{"id":117,"name":"item 117","owner":{"login":"u5"},"price":146.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','118','{"id":118,"name":"item 118","owner":{"login":"u6"},"price":147.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','119','{"id":119,"name":"item 119","owner":{"login":"u0"},"price":148.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','12','{"id":12,"name":"item 12","owner":{"login":"u5"},"price":15,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','120','{"id":120,"name":"item 120","owner":{"login":"u1"},"price":150,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','13','{"id":13,"name":"item 13","owner":{"login":"u6"},"price":16.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','14','{"id":14,"name":"item 14","owner":{"login":"u0"},"price":17.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','15','{"id":15,"name":"item 15","owner":{"login":"u1"},"price":18.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','16','{"id":16,"name":"item 16","owner":{"login":"u2"},"price":20,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','17','{"id":17,"name":"item 17","owner":{"login":"u3"},"price":21.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','18','{"id":18,"name":"item 18","owner":{"login":"u4"},"price":22.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','19','{"id":19,"name":"item 19","owner":{"login":"u5"},"price":23.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','2','{"id":2,"name":"item 2","owner":{"login":"u2"},"price":2.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','20','{"id":20,"name":"item 20","owner":{"login":"u6"},"price":25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','21','{"id":21,"name":"item 21","owner":{"login":"u0"},"price":26.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','22','{"id":22,"name":"item 22","owner":{"login":"u1"},"price":27.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','23','{"id":23,"name":"item 23","owner":{"login":"u2"},"price":28.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','24','{"id":24,"name":"item 24","owner":{"login":"u3"},"price":30,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','25','{"id":25,"name":"item 25","owner":{"login":"u4"},"price":31.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','26','{"id":26,"name":"item 26","owner":{"login":"u5"},"price":32.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','27','{"id":27,"name":"item 27","owner":{"login":"u6"},"price":33.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','28','{"id":28,"name":"item 28","owner":{"login":"u0"},"price":35,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','29','{"id":29,"name":"item 29","owner":{"login":"u1"},"price":36.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','3','{"id":3,"name":"item 3","owner":{"login":"u3"},"price":3.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','30','{"id":30,"name":"item 30","owner":{"login":"u2"},"price":37.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','31','{"id":31,"name":"item 31","owner":{"login":"u3"},"price":38.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','32','{"id":32,"name":"item 32","owner":{"login":"u4"},"price":40,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','33','{"id":33,"name":"item 33","owner":{"login":"u5"},"price":41.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','34','{"id":34,"name":"item 34","owner":{"login":"u6"},"price":42.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','35','{"id":35,"name":"item 35","owner":{"login":"u0"},"price":43.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','36','{"id":36,"name":"item 36","owner":{"login":"u1"},"price":45,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','37','{"id":37,"name":"item 37","owner":{"login":"u2"},"price":46.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','38','{"id":38,"name":"item 38","owner":{"login":"u3"},"price":47.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','39','{"id":39,"name":"item 39","owner":{"login":"u4"},"price":48.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','4','{"id":4,"name":"item 4","owner":{"login":"u4"},"price":5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','40','{"id":40,"name":"item 40","owner":{"login":"u5"},"price":50,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','41','{"id":41,"name":"item 41","owner":{"login":"u6"},"price":51.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','42','{"id":42,"name":"item 42","owner":{"login":"u0"},"price":52.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','43','{"id":43,"name":"item 43","owner":{"login":"u1"},"price":53.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','44','{"id":44,"name":"item 44","owner":{"login":"u2"},"price":55,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','45','{"id":45,"name":"item 45","owner":{"login":"u3"},"price":56.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','46','{"id":46,"name":"item 46","owner":{"login":"u4"},"price":57.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','47','{"id":47,"name":"item 47","owner":{"login":"u5"},"price":58.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','48','{"id":48,"name":"item 48","owner":{"login":"u6"},"price":60,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','49','{"id":49,"name":"item 49","owner":{"login":"u0"},"price":61.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','50','{"id":50,"name":"item 50","owner":{"login":"u1"},"price":62.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','500','{"extra":true,"id":500,"name":"new","price":1}','2026-11-30T18:45:38.788Z');
INSERT INTO records VALUES('items','51','{"id":51,"name":"item 51","owner":{"login":"u2"},"price":63.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','52','{"id":52,"name":"item 52","owner":{"login":"u3"},"price":65,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','53','{"id":53,"name":"item 53","owner":{"login":"u4"},"price":66.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','54','{"id":54,"name":"item 54","owner":{"login":"u5"},"price":67.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','55','{"id":55,"name":"item 55","owner":{"login":"u6"},"price":68.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','56','{"id":56,"name":"item 56","owner":{"login":"u0"},"price":70,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','57','{"id":57,"name":"item 57","owner":{"login":"u1"},"price":71.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','58','{"id":58,"name":"item 58","owner":{"login":"u2"},"price":72.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','59','{"id":59,"name":"item 59","owner":{"login":"u3"},"price":73.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','6','{"id":6,"name":"item 6","owner":{"login":"u6"},"price":7.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','60','{"id":60,"name":"item 60","owner":{"login":"u4"},"price":75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','61','{"id":61,"name":"item 61","owner":{"login":"u5"},"price":76.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','62','{"id":62,"name":"item 62","owner":{"login":"u6"},"price":77.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','63','{"id":63,"name":"item 63","owner":{"login":"u0"},"price":78.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','64','{"id":64,"name":"item 64","owner":{"login":"u1"},"price":80,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','65','{"id":65,"name":"item 65","owner":{"login":"u2"},"price":81.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','66','{"id":66,"name":"item 66","owner":{"login":"u3"},"price":82.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','67','{"id":67,"name":"item 67","owner":{"login":"u4"},"price":83.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','68','{"id":68,"name":"item 68","owner":{"login":"u5"},"price":85,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','69','{"id":69,"name":"item 69","owner":{"login":"u6"},"price":86.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','7','{"id":7,"name":"item 7","owner":{"login":"u0"},"price":8.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','70','{"id":70,"name":"item 70","owner":{"login":"u0"},"price":87.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','71','{"id":71,"name":"item 71","owner":{"login":"u1"},"price":88.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','72','{"id":72,"name":"item 72","owner":{"login":"u2"},"price":90,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','73','{"id":73,"name":"item 73","owner":{"login":"u3"},"price":91.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','74','{"id":74,"name":"item 74","owner":{"login":"u4"},"price":92.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','75','{"id":75,"name":"item 75","owner":{"login":"u5"},"price":93.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','76','{"id":76,"name":"item 76","owner":{"login":"u6"},"price":95,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','77','{"id":77,"name":"item 77","owner":{"login":"u0"},"price":96.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','78','{"id":78,"name":"item 78","owner":{"login":"u1"},"price":97.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','79','{"id":79,"name":"item 79","owner":{"login":"u2"},"price":98.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','8','{"id":8,"name":"item 8","owner":{"login":"u1"},"price":10,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','80','{"id":80,"name":"item 80","owner":{"login":"u3"},"price":100,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','81','{"id":81,"name":"item 81","owner":{"login":"u4"},"price":101.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','82','{"id":82,"name":"item 82","owner":{"login":"u5"},"price":102.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','83','{"id":83,"name":"item 83","owner":{"login":"u6"},"price":103.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','84','{"id":84,"name":"item 84","owner":{"login":"u0"},"price":105,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','85','{"id":85,"name":"item 85","owner":{"login":"u1"},"price":106.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','86','{"id":86,"name":"item 86","owner":{"login":"u2"},"price":107.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','87','{"id":87,"name":"item 87","owner":{"login":"u3"},"price":108.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','88','{"id":88,"name":"item 88","owner":{"login":"u4"},"price":110,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','89','{"id":89,"name":"item 89","owner":{"login":"u5"},"price":111.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','9','{"id":9,"name":"item 9","owner":{"login":"u2"},"price":11.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','90','{"id":90,"name":"item 90","owner":{"login":"u6"},"price":112.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','91','{"id":91,"name":"item 91","owner":{"login":"u0"},"price":113.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','92','{"id":92,"name":"item 92","owner":{"login":"u1"},"price":115,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','93','{"id":93,"name":"item 93","owner":{"login":"u2"},"price":116.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','94','{"id":94,"name":"item 94","owner":{"login":"u3"},"price":117.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','95','{"id":95,"name":"item 95","owner":{"login":"u4"},"price":118.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','96','{"id":96,"name":"item 96","owner":{"login":"u5"},"price":120,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','97','{"id":97,"name":"item 97","owner":{"login":"u6"},"price":121.25,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','98','{"id":98,"name":"item 98","owner":{"login":"u0"},"price":122.5,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
INSERT INTO records VALUES('items','99','{"id":99,"name":"item 99","owner":{"login":"u1"},"price":123.75,"tags":["a","b"]}','2026-11-30T18:45:38.564Z');
CREATE TABLE record_fields (
    source   TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name     TEXT NOT NULL,
    PRIMARY KEY (source, name)
) STRICT;
INSERT INTO record_fields VALUES('Jokes',0,'id');
INSERT INTO record_fields VALUES('Jokes',1,'name');
INSERT INTO record_fields VALUES('Jokes',2,'price');
INSERT INTO record_fields VALUES('items',0,'id');
INSERT INTO record_fields VALUES('items',1,'name');
INSERT INTO record_fields VALUES('items',2,'price');
INSERT INTO record_fields VALUES('Jokes',3,'extra');
INSERT INTO record_fields VALUES('items',3,'extra');
CREATE TABLE record_views (
    source TEXT PRIMARY KEY REFERENCES sources(name) ON DELETE CASCADE,
    view   TEXT NOT NULL UNIQUE COLLATE NOCASE
) STRICT;
INSERT INTO record_views VALUES('Jokes','cached_Jokes_json');
INSERT INTO record_views VALUES('items','cached_items');
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('sync_runs',9);
CREATE INDEX sync_runs_by_source ON sync_runs (source, id);
CREATE INDEX sync_runs_by_time ON sync_runs (finished_at);
CREATE INDEX changes_by_run ON changes (run_id);
CREATE INDEX changes_by_source ON changes (source, id);
CREATE INDEX loads_by_source ON loads (source, run_id);
CREATE VIEW cached_accounts AS
SELECT source, name, balance, seen_at,
       CAST((julianday('now') - julianday(seen_at)) * 86400 AS INTEGER) AS age_s,
       ((julianday('now') - julianday(seen_at)) * 86400 > ttl_s) AS stale
FROM (SELECT a.source, a.name, a.balance, s.ttl_s,
             max(a.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
      FROM accounts a
      JOIN sources s ON s.name = a.source
      LEFT JOIN sync_state st ON st.source = a.source);
CREATE VIEW cached_transactions AS
SELECT id, source, account, type, vendor, amount, date, ordinal, seen_at,
       CAST((julianday('now') - julianday(seen_at)) * 86400 AS INTEGER) AS age_s,
       ((julianday('now') - julianday(seen_at)) * 86400 > ttl_s) AS stale
FROM (SELECT t.id, t.source, a.name AS account, t.type, t.vendor, t.amount, t.date, t.ordinal, s.ttl_s,
             max(t.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
      FROM transactions t
      JOIN sources s ON s.name = t.source
      LEFT JOIN accounts a ON a.source = t.source
      LEFT JOIN sync_state st ON st.source = t.source);
CREATE VIEW cached_jokes AS
SELECT id, type, setup, punchline, source, seen_at,
       CAST((julianday('now') - julianday(seen_at)) * 86400 AS INTEGER) AS age_s,
       ((julianday('now') - julianday(seen_at)) * 86400 > ttl_s) AS stale
FROM (SELECT j.id, j.type, j.setup, j.punchline, j.source, s.ttl_s,
             max(j.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
      FROM jokes j
      JOIN sources s ON s.name = j.source
      LEFT JOIN sync_state st ON st.source = j.source);
CREATE VIEW cached_records AS
SELECT source, key, record, seen_at,
       CAST((julianday('now') - julianday(seen_at)) * 86400 AS INTEGER) AS age_s,
       ((julianday('now') - julianday(seen_at)) * 86400 > ttl_s) AS stale
FROM (SELECT r.source, r.key, r.record, s.ttl_s,
             max(r.seen_at, coalesce(st.confirmed_at, '')) AS seen_at
      FROM records r
      JOIN sources s ON s.name = r.source
      LEFT JOIN sync_state st ON st.source = r.source);
CREATE VIEW "cached_Jokes_json" AS SELECT key, json_extract(record, '$."id"') AS "id", json_extract(record, '$."name"') AS "name", json_extract(record, '$."price"') AS "price", json_extract(record, '$."extra"') AS "extra", seen_at, age_s, stale
FROM cached_records WHERE source = 'Jokes';
CREATE VIEW "cached_items" AS SELECT key, json_extract(record, '$."id"') AS "id", json_extract(record, '$."name"') AS "name", json_extract(record, '$."price"') AS "price", json_extract(record, '$."extra"') AS "extra", seen_at, age_s, stale
FROM cached_records WHERE source = 'items';
COMMIT;
PRAGMA application_id = 1667326824;
