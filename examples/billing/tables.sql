-- The billing example: bills arrive on Kafka, are deduplicated over the
-- whole history, summed per user, and written exactly once.
--
-- This file declares the tables and views; to_mysql.sql and to_files.sql
-- start the jobs in one process, cluster.sql on cluster workers.
-- Variables (streamsql --var name=value):
--   bootstrap    the Kafka bootstrap servers, host:port
--   checkpoints  the checkpoint directory
SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '${checkpoints}';
-- Deduplication keeps one entry per bill id ever seen; forget a bill id
-- after 30 days without a resend. As in Flink, the TTL applies to every
-- stateful operator of the job: a user without a bill for 30 days also
-- starts a new total. Raise it if totals must span longer idle times.
SET 'table.exec.state.ttl' = '30 d';

-- One JSON event per bill: {"bill_id": 17, "user_id": 3,
-- "amount_cents": 1299, "event_time": "2026-11-29 10:00:00.017"}.
-- About 5% are resends of earlier bills, some arrive late, a few are
-- malformed: those are skipped and counted.
CREATE TABLE bills (
  bill_id      BIGINT,
  user_id      BIGINT,
  amount_cents BIGINT,
  event_time   TIMESTAMP(3),
  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'bills',
  'properties.bootstrap.servers' = '${bootstrap}',
  'properties.group.id' = 'billing',
  'properties.isolation.level' = 'read_committed',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

-- Every bill once, over the whole history: the first copy of each bill
-- id wins (a resend has the same content and event time).
CREATE VIEW unique_bills AS
SELECT bill_id, user_id, amount_cents, event_time
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY bill_id ORDER BY event_time ASC) AS rn
  FROM bills
)
WHERE rn = 1;

CREATE VIEW totals AS
SELECT user_id, SUM(amount_cents) AS total_cents, COUNT(*) AS bills
FROM unique_bills
GROUP BY user_id;

-- The totals as a compacted topic: one record per change of a user's
-- total, keyed by user id, written in Kafka transactions that commit
-- with each checkpoint.
CREATE TABLE user_totals_topic (
  user_id     BIGINT,
  total_cents BIGINT,
  bills       BIGINT,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'user_totals',
  'properties.bootstrap.servers' = '${bootstrap}',
  'key.format' = 'json',
  'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'billing-totals'
);
