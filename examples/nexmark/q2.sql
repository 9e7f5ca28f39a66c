-- Query 2: Selection
-- Find bids with specific auction ids and show their bid price
-- (every 123rd auction, as the reference does).
CREATE TABLE nexmark_q2 (
  auction  BIGINT,
  price  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
