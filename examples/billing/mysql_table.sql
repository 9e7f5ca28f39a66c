-- The MySQL side of the billing example (run in MySQL, not streamsql).
CREATE TABLE IF NOT EXISTS user_totals (
  user_id     BIGINT PRIMARY KEY,
  total_cents BIGINT NOT NULL,
  bills       BIGINT NOT NULL
);
