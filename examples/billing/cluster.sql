-- The billing job in cluster mode: the same totals written to MySQL and
-- to the upsert-kafka topic, as one job (a statement set) that several
-- `streamsql worker` processes share. Run after tables.sql, the same on
-- every worker:
--   streamsql worker --bootstrap-servers ... -i tables.sql -f cluster.sql --var bootstrap=... --var checkpoints=... --var mysql_url=...
-- or all on one machine:
--   streamsql cluster --workers 3 -i tables.sql -f cluster.sql --var mysql_url=...
-- The MySQL table must exist (see mysql_table.sql).
CREATE TABLE user_totals (
  user_id     BIGINT,
  total_cents BIGINT,
  bills       BIGINT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH (
  'connector' = 'mysql',
  'url' = '${mysql_url}',
  'table-name' = 'user_totals',
  'sink.semantic' = 'exactly-once'
);

SET 'pipeline.name' = 'billing-cluster';
EXECUTE STATEMENT SET BEGIN
  INSERT INTO user_totals SELECT * FROM totals;
  INSERT INTO user_totals_topic SELECT * FROM totals;
END;
