-- The SQLite workload traced for the program tables: a table of @n rows with text and
-- blobs of varied length, two indexes, an aggregate, a delete of a third, a distinct count.
-- Run as: sqlite3 :memory: -cmd ".parameter set @n 100000" ".read queries.sql"
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < @n)
INSERT INTO t SELECT x, printf('name-%08d', (x * 7919) % 100003), x % 97, randomblob(x % 300) FROM c;
CREATE INDEX t_name ON t(name);
CREATE INDEX t_grp ON t(grp, name);
SELECT grp, count(*), sum(length(payload)) FROM t GROUP BY grp ORDER BY 2 DESC LIMIT 3;
DELETE FROM t WHERE id % 3 = 0;
SELECT count(DISTINCT substr(name, 1, 8)) FROM t;
