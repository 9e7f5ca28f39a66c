// Package mysql is the MySQL/MariaDB connector ('connector' = 'mysql'),
// built on github.com/go-sql-driver/mysql.
//
// As a sink it has three semantics ('sink.semantic'):
//
//   - exactly-once: a two-phase-commit sink on XA transactions, run by
//     connectors/twophase. A subtask buffers a checkpoint's changes in
//     memory (compacted by primary key), and at the barrier writes them
//     in one XA transaction: XA START, multi-row INSERT ... ON DUPLICATE
//     KEY UPDATE / DELETE, XA END, XA PREPARE. When the checkpoint
//     completes, XA COMMIT. Readers see the rows only then. See xa.go for
//     transaction names, connections and recovery.
//   - upsert (the default with a PRIMARY KEY): at-least-once, idempotent
//     by key. Changes are buffered (compacted by key) and flushed by
//     size, by interval and at every barrier, so a completed checkpoint
//     means the rows are in MySQL. A replay after a failure rewrites the
//     same keys with the same final values.
//   - at-least-once (the default without a key): plain multi-row INSERTs
//     of an append-only stream; a replay may insert a batch twice.
//
// The sink table is created by the user; when a job starts, the sink
// checks that every column exists in MySQL with a compatible type and
// that the primary keys are the same columns, and names the column that
// differs.
//
// As a source it reads the table once (bounded), for dimension tables;
// see source.go.
//
// Connections run at READ COMMITTED so that writes by primary key take
// record locks only: sink subtasks write disjoint keys and never wait on
// each other's prepared transactions.
//
// The password ('password', or one inside 'url') is never printed:
// SHOW CREATE TABLE masks it (package secrets), the connector's
// errors are scrubbed of it, and config.String leaves it out.
package mysql

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
)

func init() { connectors.Register(connector{}) }

type connector struct{}

func (connector) Name() string                    { return "mysql" }
func (connector) Options() []connectors.OptionDef { return options }

// NewSink validates the options. It does not connect: the server may not
// be up yet when the table is declared; the schema is checked when a job
// starts.
func (connector) NewSink(t *connectors.Table, _ *connectors.Env) (connectors.TableSink, error) {
	cfg, err := parseConfig(t)
	if err != nil {
		return nil, err
	}
	base := dbconn.SinkBase{Connector: "mysql", Keyed: len(t.PrimaryKey) > 0, Semantic: cfg.semantic, Par: cfg.parallelism}
	return &sink{SinkBase: base, cfg: cfg, t: t, shape: shapeOf(cfg, t)}, nil
}

// shapeOf is the MySQL table of cfg as the statements name it: `db`.`table`
// or `table`, with t's columns and key.
func shapeOf(cfg *config, t *connectors.Table) *dbconn.Table {
	s := &dbconn.Table{Qualified: quoteIdent(cfg.table), PK: t.PrimaryKey, Types: t.Types()}
	if cfg.schema != "" {
		s.Qualified = quoteIdent(cfg.schema) + "." + s.Qualified
	}
	for _, c := range t.Columns {
		s.Cols = append(s.Cols, c.Name)
	}
	return s
}

// sink is the TableSink of all three semantics; SinkBase answers all but
// Create.
type sink struct {
	dbconn.SinkBase
	cfg   *config
	t     *connectors.Table
	shape *dbconn.Table
}

var _ connectors.StatefulSink = (*sink)(nil)

// Create makes one subtask's operator. The schema is checked in the
// operator's Open, on the job's start.
func (s *sink) Create(subtask, parallelism int) (dataflow.Operator, error) {
	if s.cfg.semantic == dbconn.ExactlyOnce {
		return twophase.NewOperator(s.t.Name, newXAHandler(s.cfg, s.t, s.shape), twophase.DefaultOptions()), nil
	}
	return newUpsertOp(s.cfg, s.t, s.shape), nil
}

// newUpsertOp is the at-least-once sink operator (semantics upsert and
// at-least-once): changebuf's operator over an upsertWriter.
func newUpsertOp(cfg *config, t *connectors.Table, shape *dbconn.Table) *changebuf.Operator {
	return changebuf.NewOperator("mysql sink", &upsertWriter{cfg: cfg, t: t, shape: shape}, shape.PK, cfg.maxRows, cfg.interval)
}

// upsertWriter writes batches with INSERT ... ON DUPLICATE KEY UPDATE
// and DELETE by key (plain INSERT without a key).
type upsertWriter struct {
	cfg   *config
	t     *connectors.Table
	shape *dbconn.Table
	pool  *pool
}

var _ changebuf.Writer = (*upsertWriter)(nil)

// Open connects and verifies the MySQL table, retrying while the server
// is unreachable.
func (w *upsertWriter) Open(ctx context.Context) error {
	p, err := newPool(w.cfg)
	if err != nil {
		return err
	}
	w.pool = p
	err = retryWrite(ctx, w.cfg.maxRetries, func() error {
		c, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		return checkSchema(c, p.db, w.cfg, w.t)
	})
	if err != nil {
		return fmt.Errorf("mysql sink '%s': %w", w.t.Name, w.cfg.redact(err))
	}
	return nil
}

// Write writes the batch, retrying transient failures.
func (w *upsertWriter) Write(ctx context.Context, b *changebuf.Buffer) error {
	buf := &buffer{shape: w.shape, b: b}
	err := retryWrite(ctx, w.cfg.maxRetries, func() error {
		c, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		return buf.flush(c, w.pool.db, w.cfg.maxRows)
	})
	if err != nil {
		return fmt.Errorf("mysql sink '%s': writing %d changes: %w", w.t.Name, b.Len(), w.cfg.redact(err))
	}
	return nil
}

func (w *upsertWriter) Close() error {
	if w.pool != nil {
		return w.pool.close()
	}
	return nil
}
