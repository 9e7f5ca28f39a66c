-- Query 13: Bounded Side Input Join (not in the original suite)
-- Joins a stream to a bounded side input, modeling basic stream enrichment.
-- The side input is the bounded table of rows (key, value) = (k, 'k') for
-- k in 0..9999, generated rather than read from a file; the processing-time
-- lookup join is a regular join (see CHANGES.md).
CREATE TABLE side_input (
  `key` BIGINT,
  `value` STRING
) WITH (
  'connector' = 'datagen',
  'fields.key.kind' = 'sequence',
  'fields.key.start' = '0',
  'fields.key.end' = '9999',
  'fields.value.kind' = 'sequence',
  'fields.value.start' = '0',
  'fields.value.end' = '9999'
);

CREATE TABLE nexmark_q13 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  dateTime  TIMESTAMP(3),
  `value`  STRING
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
FROM bid B
JOIN side_input AS S
ON mod(B.auction, 10000) = S.`key`;
