package cdcpump

import (
	"context"

	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dataflow"
)

// Reconnect is the loop of a CDC source's stream: it runs one connection
// until that fails, then, while the failure is transient, waits
// (dbconn.NewBackoff, started over after a connection that delivered)
// and connects again, at most maxRetries failures in a row.
type Reconnect struct {
	MaxRetries int
	// Once runs one connection until it fails; it sets *failures to 0
	// when the connection delivers a transaction.
	Once func(ctx context.Context, failures *int) error
	// Classify returns the error to go on with and whether it is
	// transient; an error that is not ends the stream as returned.
	Classify func(err error) (error, bool)
	// Exhausted is the error that ends the stream after n failures in a
	// row, the last err.
	Exhausted func(n int, err error) error
	// Lost reports failure n (err) before the wait.
	Lost func(n int, err error)
}

// Run loops until ctx ends or a failure ends the stream.
func (r *Reconnect) Run(ctx context.Context, out dataflow.SourceOutput) error {
	failures := 0
	delay := dbconn.NewBackoff()
	for {
		err := r.Once(ctx, &failures)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err, transient := r.Classify(err)
		if !transient {
			return err
		}
		failures++
		if failures > r.MaxRetries {
			return r.Exhausted(failures, err)
		}
		r.Lost(failures, err)
		if failures == 1 {
			delay.Reset()
		}
		if err := out.Sleep(ctx, delay.NextBackOff()); err != nil {
			return err
		}
	}
}
