-- Nexmark source, in the form of the reference's ddl_gen.sql: one table
-- of every event (persons, auctions and bids as ROW columns, event_type
-- saying which one is set), a computed event time over the three kinds
-- with the watermark on it, and three views that split the stream.
--
-- 10,000,000 events at 1,000,000 events/s span 10 s of event time, as
-- the reference's published runs (100,000,000 events at 10,000,000/s) do.
--
-- Run a query with:  streamsql -i examples/nexmark/ddl.sql -f examples/nexmark/q5.sql
-- Benchmark it with: streamsql bench nexmark --query q5 --events 10000000

CREATE TABLE datagen (
    event_type  INT,
    person  ROW<
        id  BIGINT,
        name  VARCHAR,
        emailAddress  VARCHAR,
        creditCard  VARCHAR,
        city  VARCHAR,
        state  VARCHAR,
        dateTime  TIMESTAMP(3),
        extra  VARCHAR>,
    auction  ROW<
        id  BIGINT,
        itemName  VARCHAR,
        description  VARCHAR,
        initialBid  BIGINT,
        reserve  BIGINT,
        dateTime  TIMESTAMP(3),
        expires  TIMESTAMP(3),
        seller  BIGINT,
        category  BIGINT,
        extra  VARCHAR>,
    bid  ROW<
        auction  BIGINT,
        bidder  BIGINT,
        price  BIGINT,
        channel  VARCHAR,
        url  VARCHAR,
        dateTime  TIMESTAMP(3),
        extra  VARCHAR>,
    -- the event's time, whichever kind it is (0 person, 1 auction, 2 bid)
    dateTime AS CASE
        WHEN event_type = 0 THEN person.dateTime
        WHEN event_type = 1 THEN auction.dateTime
        ELSE bid.dateTime
    END,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '1000000',
    'next-event.rate' = '1000000',
    'events.num' = '10000000',
    'person.proportion' = '1',
    'auction.proportion' = '3',
    'bid.proportion' = '46'
);

CREATE VIEW person AS
SELECT
    person.id,
    person.name,
    person.emailAddress,
    person.creditCard,
    person.city,
    person.state,
    dateTime,
    person.extra
FROM datagen
WHERE event_type = 0;

CREATE VIEW auction AS
SELECT
    auction.id,
    auction.itemName,
    auction.description,
    auction.initialBid,
    auction.reserve,
    dateTime,
    auction.expires,
    auction.seller,
    auction.category,
    auction.extra
FROM datagen
WHERE event_type = 1;

CREATE VIEW bid AS
SELECT
    bid.auction,
    bid.bidder,
    bid.price,
    bid.channel,
    bid.url,
    dateTime,
    bid.extra
FROM datagen
WHERE event_type = 2;
