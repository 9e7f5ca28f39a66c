-- Run after tables.sql when there is no MySQL server:
--   streamsql -i tables.sql -f to_files.sql --var bootstrap=... --var checkpoints=... --var out=DIR
-- The totals' changelog goes to part files as Debezium events, each file
-- renamed into place when the checkpoint that covers it completes.
CREATE TABLE user_totals (
  user_id     BIGINT,
  total_cents BIGINT,
  bills       BIGINT
) WITH (
  'connector' = 'filesystem',
  'path' = '${out}',
  'format' = 'debezium-json'
);

SET 'parallelism.default' = '2';

SET 'pipeline.name' = 'billing-files';
INSERT INTO user_totals SELECT * FROM totals;

SET 'pipeline.name' = 'billing-topic';
INSERT INTO user_totals_topic SELECT * FROM totals;
