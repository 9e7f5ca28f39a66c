-- Query 10: Log to File System (not in the original suite)
-- Log all bids, with the day and minute the reference partitions the
-- files by, as CSV files in the directory nexmark-q10. streamsql's
-- filesystem sink does not partition (no PARTITIONED BY, no partition
-- commit policy), so dt and hm are plain columns (see CHANGES.md).
CREATE TABLE nexmark_q10 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  dateTime  TIMESTAMP(3),
  extra  STRING,
  dt STRING,
  hm STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'nexmark-q10',
  'format' = 'csv'
);

INSERT INTO nexmark_q10
SELECT auction, bidder, price, dateTime, extra, DATE_FORMAT(dateTime, 'yyyy-MM-dd'), DATE_FORMAT(dateTime, 'HH:mm')
FROM bid;
