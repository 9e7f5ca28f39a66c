package dbconn

import (
	"strings"
	"time"

	"github.com/streamsql/streamsql/connectors"
)

// SinkOptions are the options of a database sink that both databases
// read alike: 'sink.semantic', 'sink.buffer-flush.max-rows' and
// '.interval', 'sink.max-retries' and 'sink.parallelism'.
type SinkOptions struct {
	Semantic    Semantic
	MaxRows     int           // rows per multi-row statement, and the upsert sink's flush size
	Interval    time.Duration // the upsert sink's flush interval; 0 flushes by size and at barriers only
	MaxRetries  int           // attempts of a failed write or prepare
	Parallelism int           // 0: the job's
}

// ParseSinkOptions reads t's sink options, with the defaults their
// declarations state. system names the database in errors ("MySQL").
func ParseSinkOptions(t *connectors.Table, system string) (SinkOptions, error) {
	var o SinkOptions
	var err error
	if o.Semantic, err = ParseSemantic(t.Options["sink.semantic"], len(t.PrimaryKey) > 0, system); err != nil {
		return o, err
	}
	if o.MaxRows, err = connectors.Int(t.Options, "sink.buffer-flush.max-rows", 500, 1); err != nil {
		return o, err
	}
	if o.MaxRetries, err = connectors.Int(t.Options, "sink.max-retries", 10, 1); err != nil {
		return o, err
	}
	if o.Parallelism, err = connectors.Int(t.Options, "sink.parallelism", 0, 1); err != nil {
		return o, err
	}
	if o.Interval, err = connectors.Duration(t.Options, "sink.buffer-flush.interval", time.Second); err != nil {
		return o, err
	}
	return o, nil
}

// Redact removes password from err's text: a last line of defence,
// since a driver's error could some day quote a connection string. The
// error it returns still unwraps to err, for errors.Is/As (the drivers'
// error codes), but prints only the cleaned text.
func Redact(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return redacted{msg: strings.ReplaceAll(err.Error(), password, "******"), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }
