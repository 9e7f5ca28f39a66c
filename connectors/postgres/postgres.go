// Package postgres is the PostgreSQL connector: the sink of Flink's
// 'connector' = 'jdbc' for 'jdbc:postgresql://' URLs (registered with
// connectors/jdbc), and 'connector' = 'postgres-cdc', which reads a
// table's snapshot and then its changes through logical replication
// (cdc.go). It is built on github.com/jackc/pgx/v5.
//
// As a sink it has three semantics ('sink.semantic'), as the mysql
// connector does:
//
//   - exactly-once: a two-phase-commit sink on PostgreSQL's prepared
//     transactions, run by connectors/twophase. A subtask buffers a
//     checkpoint's changes (compacted by primary key, connectors/changebuf)
//     and at the barrier writes them in one transaction: BEGIN, multi-row
//     INSERT ... ON CONFLICT DO UPDATE / DELETE, PREPARE TRANSACTION.
//     When the checkpoint completes, COMMIT PREPARED. Readers see the
//     rows only then. See twopc.go for names and recovery. The server
//     needs max_prepared_transactions > 0; with 0 the job fails at start,
//     saying so.
//   - upsert (the default with a PRIMARY KEY): at-least-once, idempotent
//     by key; flushed by size, interval and at every barrier.
//   - at-least-once (the default without a key): plain multi-row INSERTs.
//
// The sink table is created by the user; when a job starts the sink
// checks every column's existence and type and the primary key, and
// names the column that differs.
//
// The password ('password', or one in 'url') is never printed: SHOW
// CREATE TABLE masks it (package secrets), and the connector's errors
// are scrubbed of it.
package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/connectors/jdbc"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
)

func init() { jdbc.RegisterDialect("postgresql", connector{}) }

// connector is the 'jdbc' connector's PostgreSQL dialect.
type connector struct{}

func (connector) Name() string                    { return "jdbc" }
func (connector) Options() []connectors.OptionDef { return sinkOptions }

// NewSink validates the options. It does not connect: the server may not
// be up yet when the table is declared; the schema is checked when a job
// starts.
func (connector) NewSink(t *connectors.Table, _ *connectors.Env) (connectors.TableSink, error) {
	cfg, err := parseConfig(t)
	if err != nil {
		return nil, err
	}
	base := dbconn.SinkBase{Connector: "jdbc", Keyed: len(t.PrimaryKey) > 0, Semantic: cfg.semantic, Par: cfg.parallelism}
	return &sink{SinkBase: base, cfg: cfg, t: t}, nil
}

// sink is the TableSink of all three semantics; SinkBase answers all but
// Create.
type sink struct {
	dbconn.SinkBase
	cfg *config
	t   *connectors.Table
}

var _ connectors.StatefulSink = (*sink)(nil)

// Create makes one subtask's operator; the schema is checked in its
// Open, when the job starts.
func (s *sink) Create(int, int) (dataflow.Operator, error) {
	if s.cfg.semantic == dbconn.ExactlyOnce {
		return twophase.NewOperator(s.t.Name, &pcHandler{target: target{cfg: s.cfg, t: s.t}}, twophase.DefaultOptions()), nil
	}
	w := &upsertWriter{target{cfg: s.cfg, t: s.t}}
	return changebuf.NewOperator("jdbc sink", w, s.t.PrimaryKey, s.cfg.maxRows, s.cfg.interval), nil
}

// target is what every sink subtask holds: its options, its table, and
// once open, its connections and the table's shape.
type target struct {
	cfg   *config
	t     *connectors.Table
	pool  *pgxpool.Pool
	shape *dbconn.Table
}

// open connects and checks the table, retrying while the server is
// unreachable.
func (g *target) open(ctx context.Context, maxConns int32) error {
	p, err := g.cfg.open(ctx, maxConns)
	if err != nil {
		return g.errorf("%w", err)
	}
	g.pool = p
	var names []string
	err = retry(ctx, g.cfg.maxRetries, func() error {
		var err error
		names, err = checkSchema(ctx, p, g.cfg.schema, g.cfg.table, g.t)
		return err
	})
	if err != nil {
		return g.errorf("%w", err)
	}
	g.shape = &dbconn.Table{Qualified: qualifiedName(g.cfg.schema, g.cfg.table), Cols: names, Types: g.t.Types(), PK: g.t.PrimaryKey}
	return nil
}

// errorf prefixes an error with the sink's name and scrubs the password.
func (g *target) errorf(format string, args ...any) error {
	return g.cfg.redact(fmt.Errorf("jdbc sink '%s': "+format, append([]any{g.t.Name}, args...)...))
}

func (g *target) close() error {
	if g.pool != nil {
		g.pool.Close()
	}
	return nil
}

// upsertWriter is the at-least-once writer (semantics upsert and
// at-least-once).
type upsertWriter struct{ target }

var _ changebuf.Writer = (*upsertWriter)(nil)

func (w *upsertWriter) Open(ctx context.Context) error { return w.open(ctx, 2) }

// Write writes the batch in one transaction, retrying transient failures.
func (w *upsertWriter) Write(ctx context.Context, b *changebuf.Buffer) error {
	err := retry(ctx, w.cfg.maxRetries, func() error {
		tx, err := w.pool.Begin(ctx)
		if err != nil {
			return err
		}
		if err := flush(ctx, tx, w.shape, b, w.cfg.maxRows); err != nil {
			_ = tx.Rollback(context.Background())
			return err
		}
		return tx.Commit(ctx)
	})
	if err != nil {
		return w.errorf("writing %d changes: %w", b.Len(), err)
	}
	return nil
}

func (w *upsertWriter) Close() error { return w.close() }
