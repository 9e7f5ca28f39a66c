-- In MariaDB or MySQL (binlog on: --log-bin --binlog-format=ROW):
CREATE TABLE orders (
  id       BIGINT PRIMARY KEY,
  customer VARCHAR(20) NOT NULL,
  amount   DECIMAL(10, 2) NOT NULL
);
-- The source's user needs SELECT, REPLICATION SLAVE, REPLICATION CLIENT
-- (and RELOAD on MySQL, for the snapshot's brief read lock).
