package filesystem

// The filesystem sink writes JSON lines or CSV part files (or, with
// 'format' = 'debezium-json', the changelog of an updating query as
// Debezium events, one per line) exactly once,
// as Flink's FileSink does, on the two-phase-commit framework
// (connectors/twophase):
//
//   - a transaction is one part file, written under a hidden in-progress
//     name (".part-….inprogress"), which readers of the directory (this
//     connector's source among them) skip;
//   - pre-commit, on the checkpoint barrier, flushes, fsyncs and closes
//     the file; its handle (the two names) goes into the checkpoint;
//   - commit, when the checkpoint completes, renames it to its final name
//     "part-<table>-<job hash>-<parallelism>-<subtask>-<seq>-<random>.<ext>"
//     and syncs the directory. A commit whose in-progress file is gone
//     while the final file exists was done before: success;
//   - on restart, the handles of the restored checkpoint are committed and
//     every other in-progress file of the same former subtask is deleted.
//
// So a reader of the directory that ignores hidden files sees each row
// exactly once, and only rows of completed checkpoints (or of a bounded
// job that finished). Without checkpointing, an unbounded job's files
// are never committed, as in Flink.
//
// The names carry the parallelism and subtask of the writer so that
// recovery after rescaling never touches the files of a running
// subtask, and a random suffix so that a subtask restarted after
// rescaling never reuses the name of a committed file.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// NewSink implements connectors.SinkConnector.
func (connector) NewSink(t *connectors.Table, _ *connectors.Env) (connectors.TableSink, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	o := t.Options
	dir, err := localPath(o["path"])
	if err != nil {
		return nil, err
	}
	s := &fileSink{t: t, dir: dir, encoding: dyntable.AppendOnly}
	switch f := o["format"]; f {
	case "json":
		s.ext = ".json"
		s.enc = func() changeEncoder { return insertsOnly{format.NewJSONEncoder(t.Columns)} }
	case "csv":
		co, err := format.ParseCSVOptions(o)
		if err != nil {
			return nil, err
		}
		s.ext = ".csv"
		s.enc = func() changeEncoder { return insertsOnly{format.NewCSVEncoder(t.Columns, co)} }
	case "debezium-json":
		// A changelog as Debezium events: any query can write it.
		s.ext = ".json"
		s.encoding = dyntable.RetractEncoding
		s.enc = func() changeEncoder { return format.NewDebeziumJSONEncoder(t.Columns) }
	default:
		return nil, fmt.Errorf("option 'format' must be 'json', 'csv' or 'debezium-json' (sink only), got '%s'", f)
	}
	if s.p, err = connectors.Int(o, "sink.parallelism", 0, 1); err != nil {
		return nil, err
	}
	return s, nil
}

type fileSink struct {
	t        *connectors.Table
	dir      string
	ext      string
	enc      func() changeEncoder
	encoding dyntable.SinkEncoding
	p        int
}

// changeEncoder writes one change as one line (without the line break).
type changeEncoder interface {
	AppendChange(dst []byte, ch dyntable.Change) []byte
}

// insertsOnly writes the rows of an append-only stream.
type insertsOnly struct{ format.Encoder }

func (e insertsOnly) AppendChange(dst []byte, ch dyntable.Change) []byte {
	return e.Append(dst, ch.Row)
}

func (s *fileSink) Encoding() dyntable.SinkEncoding { return s.encoding }

// UpdatesHint: a primary key does not make files take updates; a
// changelog format does.
func (s *fileSink) UpdatesHint() string {
	return "'format' = 'debezium-json' writes the changelog of an updating query to files; " +
		"so do the sinks that take updates (mysql and upsert-kafka with a PRIMARY KEY, print, blackhole)"
}

func (s *fileSink) Parallelism() int { return s.p }
func (s *fileSink) KeepsState() bool { return true }

func (s *fileSink) Create(subtask, parallelism int) (dataflow.Operator, error) {
	return twophase.NewOperator(s.t.Name, &fileHandler{s: s, enc: s.enc()}, twophase.DefaultOptions()), nil
}

// fileHandler is one subtask's twophase.Handler.
type fileHandler struct {
	s      *fileSink
	enc    changeEncoder
	prefix string // "part-<table>-<job hash>-<p>-<subtask>-"
	job    string // "part-<table>-<job hash>-"
	buf    []byte
}

// fileTxn is an open part file.
type fileTxn struct {
	f          *os.File
	w          *bufio.Writer
	tmp, final string
}

// fileHandle is what the checkpoint stores of a pre-committed part.
type fileHandle struct {
	Tmp   string `json:"tmp"`
	Final string `json:"final"`
}

func (h *fileHandler) Open(_ context.Context, info twophase.SubtaskInfo) error {
	// (Checked here, not when the table is declared: a table that names
	// a file is a fine source.)
	if fi, err := os.Stat(h.s.dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("option 'path': the filesystem sink writes part files into a directory, and '%s' is a file", h.s.dir)
	}
	if err := os.MkdirAll(h.s.dir, 0o755); err != nil {
		return fmt.Errorf("creating the sink directory: %w", err)
	}
	hs := fnv.New32a()
	hs.Write([]byte(info.JobName))
	h.job = fmt.Sprintf("part-%s-%08x-", safeName(info.SinkName), hs.Sum32())
	h.prefix = fmt.Sprintf("%s%d-%d-", h.job, info.Parallelism, info.Subtask)
	return nil
}

// safeName keeps letters, digits, '_' and '-' of a table name.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "sink"
	}
	return b.String()
}

func (h *fileHandler) BeginTransaction(_ context.Context, seq int64) (twophase.Transaction, error) {
	var rb [4]byte
	if _, err := rand.Read(rb[:]); err != nil {
		return nil, err
	}
	final := fmt.Sprintf("%s%d-%s%s", h.prefix, seq, hex.EncodeToString(rb[:]), h.s.ext)
	tmp := "." + final + ".inprogress"
	f, err := os.OpenFile(filepath.Join(h.s.dir, tmp), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening part file: %w", err)
	}
	return &fileTxn{f: f, w: bufio.NewWriterSize(f, 256<<10), tmp: tmp, final: final}, nil
}

func (h *fileHandler) Write(_ context.Context, txn twophase.Transaction, c *dyntable.Chunk) error {
	t := txn.(*fileTxn)
	for _, ch := range c.Changes {
		if ch.Kind != dyntable.Insert && h.s.encoding == dyntable.AppendOnly {
			// The planner only connects insert-only queries to an
			// append-only sink; anything else is a broken invariant.
			return fmt.Errorf("filesystem sink received a %s change; it is append-only", ch.Kind)
		}
		h.buf = h.enc.AppendChange(h.buf[:0], ch)
		h.buf = append(h.buf, '\n')
		if _, err := t.w.Write(h.buf); err != nil {
			return fmt.Errorf("writing %s: %w", t.tmp, err)
		}
	}
	return nil
}

func (h *fileHandler) PreCommit(_ context.Context, txn twophase.Transaction) ([]byte, error) {
	t := txn.(*fileTxn)
	if err := t.w.Flush(); err != nil {
		return nil, fmt.Errorf("flushing %s: %w", t.tmp, err)
	}
	if err := t.f.Sync(); err != nil {
		return nil, fmt.Errorf("syncing %s: %w", t.tmp, err)
	}
	if err := t.f.Close(); err != nil {
		return nil, fmt.Errorf("closing %s: %w", t.tmp, err)
	}
	return json.Marshal(fileHandle{Tmp: t.tmp, Final: t.final})
}

func (h *fileHandler) Commit(_ context.Context, handle []byte) error {
	var fh fileHandle
	if err := json.Unmarshal(handle, &fh); err != nil {
		return twophase.Permanent(fmt.Errorf("corrupt part-file handle %q: %w", handle, err))
	}
	if filepath.Base(fh.Tmp) != fh.Tmp || filepath.Base(fh.Final) != fh.Final {
		return twophase.Permanent(fmt.Errorf("part-file handle %q names a path outside the sink directory", handle))
	}
	tmp, final := filepath.Join(h.s.dir, fh.Tmp), filepath.Join(h.s.dir, fh.Final)
	err := os.Rename(tmp, final)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(final); serr == nil {
			return nil // committed before a crash: idempotent
		}
		return twophase.Permanent(fmt.Errorf("POSSIBLE DATA LOSS: part file %s is gone and %s was never committed", fh.Tmp, fh.Final))
	}
	if err != nil {
		return err
	}
	return fsutil.SyncDir(h.s.dir)
}

func (h *fileHandler) Abort(_ context.Context, txn twophase.Transaction) error {
	t := txn.(*fileTxn)
	t.f.Close()
	if err := os.Remove(filepath.Join(h.s.dir, t.tmp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (h *fileHandler) RecoverAndCommit(ctx context.Context, handle []byte) error {
	return h.Commit(ctx, handle)
}

// RecoverAndAbort deletes the in-progress files of former subtask r: its
// pre-committed ones were just committed, so what is left was written
// after the checkpoint.
func (h *fileHandler) RecoverAndAbort(_ context.Context, r twophase.Recovered) error {
	prefix := fmt.Sprintf(".%s%d-%d-", h.job, r.Parallelism, r.Subtask)
	ents, err := os.ReadDir(h.s.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".inprogress") {
			if err := os.Remove(filepath.Join(h.s.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

func (h *fileHandler) Close() error { return nil }
