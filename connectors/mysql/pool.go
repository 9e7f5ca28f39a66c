package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

// pool is one subtask's connections. The upsert sink and the source use
// it as an ordinary database/sql pool. The XA sink takes a dedicated
// connection per transaction (dedicated): MySQL allows one XA
// transaction per connection, and a prepared one keeps its connection
// until it is committed, so the next transaction starts on another. A
// subtask thus holds at most (prepared, waiting for commit) + 1
// connections, two in the steady state.
type pool struct {
	db *sql.DB
}

func newPool(cfg *config) (*pool, error) {
	db, err := cfg.openDB()
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &pool{db: db}, nil
}

// dedicated is a connection reserved for one XA transaction, with the
// server's id for it (CONNECTION_ID()), which recovery needs to KILL a
// connection that still holds a prepared transaction.
type dedicated struct {
	conn *sql.Conn
	id   int64
}

// dedicated takes a connection from the pool.
func (p *pool) dedicated(ctx context.Context) (*dedicated, error) {
	c, err := p.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	d := &dedicated{conn: c}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&d.id); err != nil {
		d.discard()
		return nil, err
	}
	return d, nil
}

// release returns a connection in a clean state to the pool.
func (d *dedicated) release() { _ = d.conn.Close() }

// discard closes the network connection instead of pooling it: its
// state is unknown, or it is broken. A prepared XA transaction on it
// survives (the server detaches it) and can be committed from another
// connection.
func (d *dedicated) discard() {
	_ = d.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = d.conn.Close()
}

func (p *pool) close() error { return p.db.Close() }
