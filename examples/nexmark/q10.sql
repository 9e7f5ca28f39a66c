-- Query 10: Log to File System (not in the original suite)
-- Log all events with their partition values. streamsql has no
-- filesystem sink yet, so the rows go to a blackhole sink (see CHANGES.md).
CREATE TABLE nexmark_q10 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  dateTime  TIMESTAMP(3),
  extra  STRING,
  dt STRING,
  hm STRING
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q10
SELECT auction, bidder, price, dateTime, extra, DATE_FORMAT(dateTime, 'yyyy-MM-dd'), DATE_FORMAT(dateTime, 'HH:mm')
FROM bid;
