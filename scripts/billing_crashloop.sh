#!/usr/bin/env bash
# Kill -9 proof of the billing example's exactly-once delivery: runs the
# job of examples/billing (Kafka -> dedup -> aggregate -> MySQL XA and a
# transactional upsert-kafka topic) as a separate process, SIGKILLs it at
# random moments (a third of the runs exactly between a checkpoint's
# pre-commit and its commit), restarts it each time while bills keep
# arriving, and checks MySQL, the topic (read_committed) and XA RECOVER
# against totals computed straight from the input.
#
#   scripts/billing_crashloop.sh [kills] [bills] [seed]
#
# Needs MySQL (STREAMSQL_TEST_MYSQL_DSN, default root@tcp(127.0.0.1:3306)/test).
# Prints "kills=N lost=0 duplicated=0 mismatched=0" on success.
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-20}
bills=${2:-40000}
seed=${3:-1}
exec go test ./tests/billing -run TestBillingCrashLoop -count=1 -timeout 60m -v \
  -args -kills="$kills" -bills="$bills" -seed="$seed"
