-- Query 13: Bounded Side Input Join (not in the original suite)
-- Joins a stream to a bounded side input, modeling basic stream enrichment.
-- The side input is a CSV file of the rows (key, value) = (k, 'k') for
-- k in 0..9999; its 'path' is a placeholder that `streamsql bench` and
-- the tests replace by a file they write (see sideinput.go and
-- CHANGES.md). Each bid looks its key up at processing time: the lookup
-- join keeps no state per bid.
CREATE TABLE side_input (
  key BIGINT,
  `value` VARCHAR
) WITH (
  'connector' = 'filesystem',
  'path' = 'nexmark-side-input',
  'format' = 'csv'
);

CREATE TABLE nexmark_q13 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  dateTime  TIMESTAMP(3),
  `value`  VARCHAR
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.dateTime,
    S.`value`
FROM (SELECT *, PROCTIME() as p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON mod(B.auction, 10000) = S.key;
