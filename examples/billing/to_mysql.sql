-- Run after tables.sql:
--   streamsql -i tables.sql -f to_mysql.sql --var bootstrap=... --var checkpoints=... --var mysql_url=...
-- The MySQL table must exist (see mysql_table.sql). Rows are written in
-- XA transactions prepared at each checkpoint and committed when it
-- completes.
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

SET 'parallelism.default' = '2';

SET 'pipeline.name' = 'billing-mysql';
INSERT INTO user_totals SELECT * FROM totals;

SET 'pipeline.name' = 'billing-topic';
INSERT INTO user_totals_topic SELECT * FROM totals;
