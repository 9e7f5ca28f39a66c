// Package dbconn holds what the database connectors (mysql and postgres)
// share, so that each rule exists once: the 'sink.semantic' option and
// the semantics it selects (ParseSemantic), a value as a statement
// argument (Arg), the retry of transient errors with the one backoff
// policy of both (Retry, NewBackoff), the sink options
// (ParseSinkOptions) and the sink's answers to the planner (SinkBase),
// and the CDC connectors' server options (ServerOptions, NameRegexps).
// What differs — the SQL dialect, the driver, which errors are
// transient — stays in each connector.
package dbconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/streamsql/streamsql/types"
)

// Semantic is what 'sink.semantic' selects.
type Semantic string

// The sink semantics.
const (
	// ExactlyOnce writes each checkpoint's changes in one transaction,
	// prepared at the barrier and committed when the checkpoint
	// completes (connectors/twophase: XA in MySQL, PREPARE TRANSACTION in
	// PostgreSQL).
	ExactlyOnce Semantic = "exactly-once"
	// Upsert writes by primary key, flushed by size, interval and at every
	// barrier: at-least-once delivery made idempotent by the key.
	Upsert Semantic = "upsert"
	// AtLeastOnce appends rows with plain INSERTs (tables without a
	// primary key); a retry after a failure may write a batch twice.
	AtLeastOnce Semantic = "at-least-once"
)

// ParseSemantic reads the 'sink.semantic' option s of a table with a
// primary key (hasKey) or without. Unset, it is upsert with a key and
// at-least-once without; at-least-once with a key is upsert too, since
// writes by key are upserts. system names the database in errors
// ("MySQL", "PostgreSQL").
func ParseSemantic(s string, hasKey bool, system string) (Semantic, error) {
	sem := AtLeastOnce
	switch s {
	case "":
	case string(ExactlyOnce), string(Upsert), string(AtLeastOnce):
		sem = Semantic(s)
	default:
		return "", fmt.Errorf("option 'sink.semantic' must be 'exactly-once', 'upsert' or 'at-least-once', got '%s'", s)
	}
	if sem == Upsert && !hasKey {
		return "", errors.New("option 'sink.semantic' = 'upsert' needs a PRIMARY KEY (...) NOT ENFORCED matching the " + system + " table's")
	}
	if sem == AtLeastOnce && hasKey {
		sem = Upsert
	}
	return sem, nil
}

// Arg converts a value of type t to what both drivers take as a
// statement argument: Go scalars, and text for DECIMAL, DATE and
// TIMESTAMP (microseconds, the most either database keeps), which the
// server casts to the column's type.
func Arg(v types.Value, t types.Type) any {
	if v.IsNull() {
		return nil
	}
	switch v.Kind() {
	case types.KindBool:
		return v.Bool()
	case types.KindInt:
		return v.Int()
	case types.KindFloat:
		return v.Float()
	case types.KindString:
		return v.Str()
	case types.KindDate:
		return v.Time().Format("2006-01-02")
	case types.KindTimestamp:
		return v.Time().Format("2006-01-02 15:04:05.999999")
	}
	return types.Format(v, t)
}

// NewBackoff is the backoff between retries of a database operation:
// from 100 ms, doubling, at most 5 s apart.
func NewBackoff() *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{InitialInterval: 100 * time.Millisecond, Multiplier: 2, MaxInterval: 5 * time.Second}
}

// Retry runs fn up to attempts times while it fails with an error that
// transient accepts, with NewBackoff between the attempts. An error that
// is not transient is returned at once; when the attempts or ctx run out,
// the error says so and names fn's last error.
func Retry(ctx context.Context, attempts int, transient func(error) bool, fn func() error) error {
	var last error
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		if last = fn(); last != nil && !transient(last) {
			return struct{}{}, backoff.Permanent(last)
		}
		return struct{}{}, last
	}, backoff.WithBackOff(NewBackoff()), backoff.WithMaxTries(uint(attempts)), backoff.WithMaxElapsedTime(0))
	if err != nil && last != nil && err != last {
		return fmt.Errorf("%w (job stopping; last error: %v)", err, last)
	}
	return err
}

// LostConnection reports whether the text of err says the connection
// went away under the statement (refused, reset, a broken pipe, an
// early EOF), or names one of also, the phrases a driver adds.
func LostConnection(err error, also ...string) bool {
	s := err.Error()
	for _, p := range append([]string{"connection refused", "broken pipe", "connection reset", "EOF"}, also...) {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
