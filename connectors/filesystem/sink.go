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
// A PARTITIONED BY table's rows go into Hive-style folders, one level
// per partition column, e.g. dt=2024-01-01/hr=10/, as Flink writes them
// (values escaped as Hive does, NULL as 'partition.default-name'). A
// transaction is then one part file per folder it wrote to, all
// committed together. Unlike Flink, the rows keep their partition
// columns, so that the directory reads back as the same table without
// partition discovery.
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
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/types"
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
	s := &fileSink{t: t, dir: dir, encoding: dyntable.AppendOnly, defaultPart: "__DEFAULT_PARTITION__"}
	if v, ok := o["partition.default-name"]; ok {
		s.defaultPart = v
	}
	switch f := o["format"]; f {
	case "json":
		s.ext = ".json"
		s.enc = func() changeEncoder { return insertsOnly{format.NewJSONEncoder(t.Columns)} }
	case "csv":
		co, err := format.ParseCSVOptions(o)
		if err != nil {
			return nil, err
		}
		if err := format.CheckCSVColumns(t.Columns); err != nil {
			return nil, err
		}
		s.ext = ".csv"
		s.enc = func() changeEncoder { return insertsOnly{format.NewCSVEncoder(t.Columns, co)} }
	case "raw":
		ro, err := format.ParseRawOptions(o, t.Columns)
		if err != nil {
			return nil, err
		}
		s.ext, s.raw = ".txt", true
		s.enc = func() changeEncoder { return insertsOnly{format.NewRawCodec(t.Columns, ro)} }
	case "debezium-json":
		// A changelog as Debezium events: any query can write it.
		s.ext = ".json"
		s.encoding = dyntable.RetractEncoding
		s.enc = func() changeEncoder { return format.NewDebeziumJSONEncoder(t.Columns) }
	default:
		return nil, fmt.Errorf("option 'format' must be 'json', 'csv', 'raw' or 'debezium-json' (sink only), got '%s'", f)
	}
	if s.p, err = connectors.Int(o, "sink.parallelism", 0, 1); err != nil {
		return nil, err
	}
	if s.commit, err = parseCommitPolicy(t); err != nil {
		return nil, err
	}
	return s, nil
}

type fileSink struct {
	t           *connectors.Table
	dir         string
	ext         string
	raw         bool // the raw format: a line per row, which cannot be NULL
	enc         func() changeEncoder
	encoding    dyntable.SinkEncoding
	p           int
	defaultPart string        // the folder value of a NULL partition value
	commit      *commitPolicy // partition commit (commit.go); nil: none
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
	return twophase.NewOperator(s.t.Name, newFileHandler(s), twophase.DefaultOptions()), nil
}

func newFileHandler(s *fileSink) *fileHandler {
	return &fileHandler{s: s, enc: s.enc(), wm: math.MinInt64, created: map[string]time.Time{}, pending: map[string]pendingPartition{}}
}

// fileHandler is one subtask's twophase.Handler.
type fileHandler struct {
	s      *fileSink
	enc    changeEncoder
	prefix string // "part-<table>-<job hash>-<p>-<subtask>-"
	job    string // "part-<table>-<job hash>-"
	buf    []byte
	// wm is the input's watermark; created and pending are the partition
	// folders of the open transaction and those committed but waiting for
	// their trigger (commit.go).
	wm      int64
	created map[string]time.Time
	pending map[string]pendingPartition
}

var (
	_ twophase.WatermarkHandler  = (*fileHandler)(nil)
	_ twophase.EndOfInputHandler = (*fileHandler)(nil)
	_ twophase.Extras            = (*fileHandler)(nil)
)

// Watermark implements twophase.WatermarkHandler.
func (h *fileHandler) Watermark(wm int64) { h.wm = wm }

// EndOfInput implements twophase.EndOfInputHandler: every partition
// written is committed.
func (h *fileHandler) EndOfInput(context.Context) error {
	return h.commitPartitions(nil, h.wm, true)
}

// fileTxn is a transaction's open part files: one in the sink
// directory, or one per partition folder written to.
type fileTxn struct {
	seq   int64
	parts map[string]*partFile // by folder, relative to the sink directory ("" unpartitioned)
	order []string             // the folders in the order opened
}

// partFile is one open part file of a transaction.
type partFile struct {
	f          *os.File
	w          *bufio.Writer
	dir        string // the folder, relative to the sink directory
	tmp, final string // names in that folder
}

// fileHandle is what the checkpoint stores of a pre-committed part: its
// folder (empty for the sink directory itself) and its two names. A
// transaction's handle is one fileHandle, or {"parts": [...]} of a
// partitioned table's.
type fileHandle struct {
	Dir   string       `json:"dir,omitempty"`
	Tmp   string       `json:"tmp,omitempty"`
	Final string       `json:"final,omitempty"`
	Parts []fileHandle `json:"parts,omitempty"`
	// WM is the watermark at pre-commit, for the partition-time trigger.
	WM *int64 `json:"wm,omitempty"`
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
	t := &fileTxn{seq: seq, parts: map[string]*partFile{}}
	if len(h.s.t.PartitionKeys) == 0 {
		// One file per transaction, even without rows, as before.
		if _, err := h.part(t, ""); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// part returns the transaction's part file in folder dir, opening it.
func (h *fileHandler) part(t *fileTxn, dir string) (*partFile, error) {
	if p, ok := t.parts[dir]; ok {
		return p, nil
	}
	var rb [4]byte
	if _, err := rand.Read(rb[:]); err != nil {
		return nil, err
	}
	full := filepath.Join(h.s.dir, filepath.FromSlash(dir))
	if err := os.MkdirAll(full, 0o755); err != nil {
		return nil, fmt.Errorf("creating partition folder: %w", err)
	}
	final := fmt.Sprintf("%s%d-%s%s", h.prefix, t.seq, hex.EncodeToString(rb[:]), h.s.ext)
	tmp := "." + final + ".inprogress"
	f, err := os.OpenFile(filepath.Join(full, tmp), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening part file: %w", err)
	}
	p := &partFile{f: f, w: bufio.NewWriterSize(f, 256<<10), dir: dir, tmp: tmp, final: final}
	t.parts[dir] = p
	t.order = append(t.order, dir)
	if h.s.commit != nil {
		h.noteWritten(dir)
	}
	return p, nil
}

// partitionDir is the folder of a row of a PARTITIONED BY table:
// col=value/... with Hive's escaping of the values.
func (h *fileHandler) partitionDir(row types.Row) string {
	var b strings.Builder
	for i, k := range h.s.t.PartitionKeys {
		if i > 0 {
			b.WriteByte('/')
		}
		c := h.s.t.Columns[k]
		b.WriteString(escapePartition(c.Name))
		b.WriteByte('=')
		if row[k].IsNull() {
			b.WriteString(escapePartition(h.s.defaultPart))
			continue
		}
		b.WriteString(escapePartition(types.Format(row[k], c.Type)))
	}
	return b.String()
}

// escapePartition escapes a partition name or value as Hive does
// (FileUtils.escapePathName): control characters and "#%'*/:=?\{[]^
// become %XX.
func escapePartition(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (h *fileHandler) Write(_ context.Context, txn twophase.Transaction, c *dyntable.Chunk) error {
	t := txn.(*fileTxn)
	partitioned := len(h.s.t.PartitionKeys) > 0
	p := t.parts[""]
	for _, ch := range c.Changes {
		if ch.Kind != dyntable.Insert && h.s.encoding == dyntable.AppendOnly {
			// The planner only connects insert-only queries to an
			// append-only sink; anything else is a broken invariant.
			return fmt.Errorf("filesystem sink received a %s change; it is append-only", ch.Kind)
		}
		if partitioned {
			var err error
			if p, err = h.part(t, h.partitionDir(ch.Row)); err != nil {
				return err
			}
		}
		if h.s.raw && ch.Row[0].IsNull() {
			// Flink's raw format writes NULL as a null record, which a
			// line of a file cannot be.
			return fmt.Errorf("filesystem sink '%s': the 'raw' format cannot write a NULL %s to a file", h.s.t.Name, h.s.t.Columns[0].Name)
		}
		h.buf = h.enc.AppendChange(h.buf[:0], ch)
		h.buf = append(h.buf, '\n')
		if _, err := p.w.Write(h.buf); err != nil {
			return fmt.Errorf("writing %s: %w", p.tmp, err)
		}
	}
	return nil
}

func (h *fileHandler) PreCommit(_ context.Context, txn twophase.Transaction) ([]byte, error) {
	t := txn.(*fileTxn)
	var hs []fileHandle
	for _, dir := range t.order {
		p := t.parts[dir]
		if err := p.w.Flush(); err != nil {
			return nil, fmt.Errorf("flushing %s: %w", p.tmp, err)
		}
		if err := p.f.Sync(); err != nil {
			return nil, fmt.Errorf("syncing %s: %w", p.tmp, err)
		}
		if err := p.f.Close(); err != nil {
			return nil, fmt.Errorf("closing %s: %w", p.tmp, err)
		}
		hs = append(hs, fileHandle{Dir: p.dir, Tmp: p.tmp, Final: p.final})
	}
	if len(h.s.t.PartitionKeys) == 0 && len(hs) == 1 {
		return json.Marshal(hs[0])
	}
	wm := h.wm
	return json.Marshal(fileHandle{Parts: hs, WM: &wm})
}

func (h *fileHandler) Commit(_ context.Context, handle []byte) error {
	var fh fileHandle
	if err := json.Unmarshal(handle, &fh); err != nil {
		return twophase.Permanent(fmt.Errorf("corrupt part-file handle %q: %w", handle, err))
	}
	parts := fh.Parts
	if fh.Tmp != "" {
		parts = append(parts, fh)
	}
	var dirs []string
	for _, p := range parts {
		if err := h.commitPart(p, handle); err != nil {
			return err
		}
		dirs = append(dirs, p.Dir)
	}
	wm := int64(math.MinInt64)
	if fh.WM != nil {
		wm = *fh.WM
	}
	return h.commitPartitions(dirs, wm, false)
}

func (h *fileHandler) commitPart(fh fileHandle, handle []byte) error {
	dir := filepath.Join(h.s.dir, filepath.FromSlash(fh.Dir))
	if filepath.Base(fh.Tmp) != fh.Tmp || filepath.Base(fh.Final) != fh.Final || fh.Tmp == "" || fh.Final == "" ||
		!strings.HasPrefix(dir, h.s.dir) || strings.Contains(fh.Dir, "..") {
		return twophase.Permanent(fmt.Errorf("part-file handle %q names a path outside the sink directory", handle))
	}
	tmp, final := filepath.Join(dir, fh.Tmp), filepath.Join(dir, fh.Final)
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
	return fsutil.SyncDir(dir)
}

func (h *fileHandler) Abort(_ context.Context, txn twophase.Transaction) error {
	t := txn.(*fileTxn)
	for _, dir := range t.order {
		p := t.parts[dir]
		p.f.Close()
		if err := os.Remove(filepath.Join(h.s.dir, filepath.FromSlash(dir), p.tmp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
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
	if err := h.restorePartitions(r.Extra); err != nil {
		return err
	}
	prefix := fmt.Sprintf(".%s%d-%d-", h.job, r.Parallelism, r.Subtask)
	return filepath.WalkDir(h.s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if p != h.s.dir && len(h.s.t.PartitionKeys) == 0 {
				return filepath.SkipDir // only a partitioned table's files are in folders
			}
			return nil
		}
		if n := d.Name(); strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".inprogress") {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}

func (h *fileHandler) Close() error { return nil }
