-- In PostgreSQL (max_prepared_transactions > 0 for exactly-once):
CREATE TABLE customer_totals (
  customer TEXT PRIMARY KEY,
  orders   BIGINT NOT NULL,
  total    NUMERIC(38, 2) NOT NULL
);
