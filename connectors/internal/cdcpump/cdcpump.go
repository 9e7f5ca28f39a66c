// Package cdcpump is the emitting half of the change-data-capture
// sources (mysql-cdc, postgres-cdc): a reader goroutine decodes the
// database's log into committed transactions, and Pump, on the source's
// Run goroutine, emits each one as one chunk while taking the source's
// control elements (barriers, notices) between them. Reconnect is the
// loop around one connection's Pump that reconnects after a transient
// failure.
//
// The source's position moves to a transaction's end before its chunk is
// emitted: a barrier handled inside Emit follows the chunk in the
// stream, so the position it saves covers the whole transaction, and a
// barrier never falls inside one. A restore thus replays whole
// transactions after the saved position, never a part of one.
package cdcpump

import (
	"context"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// Txn is one committed transaction's changes to the captured tables and
// the log position just after it. A transaction that touched no
// captured table has no changes and still moves the position.
type Txn[P any] struct {
	Changes *dyntable.Chunk
	End     P
	// Tables, when a source fills it, names the table of each change
	// ("schema.table", parallel to Changes.Changes); mysql-cdc's chunked
	// snapshot sorts changes by it. Pump does not read it.
	Tables []string
}

// Pump runs read on a goroutine of its own until it fails or ctx ends,
// and emits what it delivers: advance(t.End), then t.Changes. read must
// stop when its context ends. Pump returns read's error after emitting
// every transaction read delivered before it, or the first error of
// out, or ctx's.
func Pump[P any](ctx context.Context, out dataflow.SourceOutput, read func(context.Context, chan<- Txn[P]) error, advance func(P)) error {
	rctx, cancel := context.WithCancel(ctx)
	txns := make(chan Txn[P], 64)
	errc := make(chan error, 1)
	go func() { errc <- read(rctx, txns) }()
	defer func() {
		cancel()
		<-errc // read has stopped: no goroutine outlives Pump
	}()
	emit := func(t Txn[P]) error {
		advance(t.End)
		if t.Changes.Len() == 0 {
			return nil
		}
		return out.Emit(t.Changes)
	}
	for {
		select {
		case t := <-txns:
			if err := emit(t); err != nil {
				return err
			}
		case e := <-out.Control():
			if err := out.Handle(e); err != nil {
				return err
			}
		case err := <-errc:
			errc <- err // for the deferred wait
			for {
				select {
				case t := <-txns:
					if err := emit(t); err != nil {
						return err
					}
					continue
				default:
				}
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
