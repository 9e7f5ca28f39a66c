#!/usr/bin/env bash
# Kill -9 proof of cluster mode's exactly-once delivery: runs the billing
# job of examples/billing (tables.sql + cluster.sql) on `streamsql worker`
# processes sharing its tasks through a Kafka consumer group (embedded
# broker), SIGKILLs and restarts workers at random while bills keep
# arriving, rescales once 3 -> 2 -> 4 workers, and checks MySQL, the
# output topic (read_committed) and XA RECOVER against totals computed
# straight from the input.
#
#   scripts/cluster_crashloop.sh [kills] [bills] [seed]
#
# Needs MySQL (STREAMSQL_TEST_MYSQL_DSN, default root@tcp(127.0.0.1:3306)/test).
# Prints "workers=3 kills=N rebalances=M lost=0 duplicated=0 mismatched=0" on success.
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-30}
bills=${2:-60000}
seed=${3:-1}
exec go test ./tests/cluster -run TestClusterCrashLoop -count=1 -timeout 60m -v \
  -args -kills="$kills" -bills="$bills" -seed="$seed"
