#!/usr/bin/env bash
# Kill -9 test of checkpoint recovery: runs a checkpointed dedup +
# aggregation job over a file of bills as a separate process, SIGKILLs it
# at random moments (some inside a snapshot), restarts it each time, and
# checks the final result against one computed straight from the input.
#
#   scripts/crashloop.sh [kills] [rows] [seed]
#
# Prints "kills=N mismatched_keys=0" on success.
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-20}
rows=${2:-2000000}
seed=${3:-1}
exec go test ./tests/crash -run TestCrashLoop -count=1 -timeout 60m -v \
  -args -kills="$kills" -rows="$rows" -seed="$seed"
