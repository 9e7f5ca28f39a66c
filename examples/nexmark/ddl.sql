-- Nexmark source tables: the reference's person, auction and bid views,
-- each read from the nexmark generator (streamsql has no ROW type, so the
-- generator reads one kind of event per table; see CHANGES.md). The three
-- tables share their options, so they see one and the same event stream.
--
-- 10,000,000 events at a nominal 1,000,000 events/s span 10 s of event
-- time, as the reference's benchmark runs (100,000,000 events at
-- 10,000,000/s) do.
--
-- Run a query with:  streamsql -i examples/nexmark/ddl.sql -f examples/nexmark/q5.sql
-- Benchmark it with: streamsql bench nexmark --query q5 --events 10000000

CREATE TABLE person (
    id  BIGINT,
    name  STRING,
    emailAddress  STRING,
    creditCard  STRING,
    city  STRING,
    state  STRING,
    dateTime  TIMESTAMP(3),
    extra  STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'table' = 'person',
    'events.num' = '10000000',
    'first-event.rate' = '1000000'
);

CREATE TABLE auction (
    id  BIGINT,
    itemName  STRING,
    description  STRING,
    initialBid  BIGINT,
    reserve  BIGINT,
    dateTime  TIMESTAMP(3),
    expires  TIMESTAMP(3),
    seller  BIGINT,
    category  BIGINT,
    extra  STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'table' = 'auction',
    'events.num' = '10000000',
    'first-event.rate' = '1000000'
);

CREATE TABLE bid (
    auction  BIGINT,
    bidder  BIGINT,
    price  BIGINT,
    channel  STRING,
    url  STRING,
    dateTime  TIMESTAMP(3),
    extra  STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'table' = 'bid',
    'events.num' = '10000000',
    'first-event.rate' = '1000000'
);
