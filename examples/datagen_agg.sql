-- A bounded datagen source aggregated per auction and printed as a
-- changelog. Run it with:  go run ./cmd/streamsql -f examples/datagen_agg.sql
CREATE TABLE bids (
  auction BIGINT,
  price   BIGINT,
  bidder  STRING
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '12',
  'rows-per-second' = '0',
  'fields.auction.min' = '1',
  'fields.auction.max' = '3',
  'fields.price.min' = '1',
  'fields.price.max' = '100',
  'fields.bidder.length' = '4'
);

CREATE TABLE auction_stats (
  auction   BIGINT,
  bids      BIGINT,
  top_price BIGINT,
  total     BIGINT
) WITH ('connector' = 'print');

EXPLAIN INSERT INTO auction_stats
SELECT auction, COUNT(*), MAX(price), SUM(price) FROM bids WHERE price > 10 GROUP BY auction;

INSERT INTO auction_stats
SELECT auction, COUNT(*), MAX(price), SUM(price) FROM bids WHERE price > 10 GROUP BY auction;
