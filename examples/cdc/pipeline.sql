-- Orders in MySQL -> mysql-cdc -> per-customer totals -> PostgreSQL,
-- exactly once. Run:
--   streamsql -f pipeline.sql --var mysql_host=db --var mysql_port=3306 \
--     --var mysql_db=shop --var pg_url='jdbc:postgresql://pg:5432/reports?user=app' \
--     --var checkpoints=/var/lib/streamsql
-- Kill it at any time and run it again: it resumes from its last
-- checkpoint (binlog position, aggregate state, prepared transactions),
-- and customer_totals never counts an order twice or misses one.
SET 'pipeline.name' = 'cdc-customer-totals';
SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '${checkpoints}';

CREATE TABLE orders (
  id       BIGINT,
  customer STRING,
  amount   DECIMAL(10, 2),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'mysql-cdc',
  'hostname' = '${mysql_host}',
  'port' = '${mysql_port}',
  'username' = 'root',
  'database-name' = '${mysql_db}',
  'table-name' = 'orders',
  'server-id' = '5401'
);

CREATE TABLE customer_totals (
  customer STRING,
  orders   BIGINT,
  total    DECIMAL(38, 2),
  PRIMARY KEY (customer) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = '${pg_url}',
  'table-name' = 'customer_totals',
  'sink.semantic' = 'exactly-once'
);

INSERT INTO customer_totals
SELECT customer, COUNT(*), SUM(amount) FROM orders GROUP BY customer;
