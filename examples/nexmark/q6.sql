-- Query 6: Average Selling Price by Seller
-- The average selling price per seller for their last 10 closed auctions.
--
-- Flink cannot run the reference text (its OVER operator does not take the
-- retractions of the winning-bid Top-1, and the text filters on rownum in
-- the SELECT that defines it). Here the last 10 winning bids of each
-- seller are a Top-N by time, and their average a group aggregate: an
-- updating table holding each seller's current average. See CHANGES.md.
CREATE TABLE nexmark_q6 (
  seller BIGINT,
  avg_price  BIGINT
) WITH (
  'connector' = 'blackhole'
);

INSERT INTO nexmark_q6
SELECT Q.seller, AVG(Q.price) AS avg_price
FROM (
    SELECT W.seller, W.price,
        ROW_NUMBER() OVER (PARTITION BY W.seller ORDER BY W.dateTime DESC) AS recent
    FROM (
        SELECT id, seller, price, dateTime FROM (
            SELECT A.id, A.seller, B.price, B.dateTime,
                ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC, B.dateTime ASC) AS rownum
            FROM auction AS A, bid AS B
            WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
        ) WHERE rownum <= 1
    ) AS W
) AS Q
WHERE Q.recent <= 10
GROUP BY Q.seller;
