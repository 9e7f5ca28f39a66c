-- Query 10: Log to File System (not in the original suite)
-- Log all bids as CSV files in the directory nexmark-q10, in Hive-style
-- folders dt=<day>/hm=<hour:minute>. The reference's partition-commit
-- and rolling-policy options are left out: streamsql's filesystem sink
-- commits every folder's part files on each checkpoint (see CHANGES.md).
CREATE TABLE nexmark_q10 (
  auction  BIGINT,
  bidder  BIGINT,
  price  BIGINT,
  dateTime  TIMESTAMP(3),
  extra  VARCHAR,
  dt STRING,
  hm STRING
) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem',
  'path' = 'nexmark-q10',
  'format' = 'csv'
);

INSERT INTO nexmark_q10
SELECT auction, bidder, price, dateTime, extra, DATE_FORMAT(dateTime, 'yyyy-MM-dd'), DATE_FORMAT(dateTime, 'HH:mm')
FROM bid;
