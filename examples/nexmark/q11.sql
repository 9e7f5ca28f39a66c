-- Query 11: User Sessions (not in the original suite)
-- How many bids did a user make in each session they were active?
-- Session windows with a 10 second gap.
CREATE TABLE nexmark_q11 (
  bidder BIGINT,
  bid_count BIGINT,
  starttime TIMESTAMP(3),
  endtime TIMESTAMP(3)
) WITH (
  'connector' = 'blackhole'
);

-- The reference groups by SESSION(B.dateTime, INTERVAL '10' SECOND), the
-- older group-window form, which streamsql does not parse yet; the SESSION
-- window table function computes the same windows (see CHANGES.md).
INSERT INTO nexmark_q11
SELECT
    B.bidder,
    count(*) as bid_count,
    window_start as starttime,
    window_end as endtime
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) B
GROUP BY B.bidder, window_start, window_end;
