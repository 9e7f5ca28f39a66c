// Package filesystem reads files of JSON lines, CSV records or raw lines, with
// Flink's filesystem connector options:
//
//	'connector' = 'filesystem'
//	'path'      = a file or a directory (a plain path or a file:// URI)
//	'format'    = 'json' | 'csv' | 'raw'
//
// A directory is read recursively: its regular files, in byte-wise
// lexical order of their path relative to the directory; files and
// directories whose name starts with '.' or '_' are skipped (Flink's
// hidden files: .crc files, _SUCCESS markers, in-progress parts).
//
// The source is bounded: it reads every file once and ends. Files are
// assigned to subtasks round-robin by their index in that order (file i
// goes to subtask i % parallelism), so a single file is read by subtask 0
// only. 'scan.parallelism' fixes the source's parallelism.
//
// Formats. 'json' is JSON lines: one object per line, its fields matched
// to columns by name (case-sensitively), missing fields and JSON null
// NULL, extra fields skipped whatever they hold. 'csv' is one record per
// line (a quoted field may span lines), fields in column order, no header
// line (as Flink's csv format). Options follow Flink's names; see Options.
// Text becomes typed values as SQL CAST from STRING does (expr.CastValue),
// so '2024-01-01 00:00:01.000' and '2024-01-01T00:00:01' both read as
// TIMESTAMP and ' 42 ' as INT. Format-specific rules are documented on
// jsonDecoder and csvDecoder. Blank lines are not records. The columns
// a query does not read are not converted (projection push-down, as
// Flink's filesystem source does), so a value in such a column that
// would not convert to its type is no error.
//
// Errors. A malformed record fails the job with an error naming the file,
// the line, the byte offset of the record and what was wrong (a
// *RecordError), unless '<format>.ignore-parse-errors' = 'true': then the
// record is skipped, counted (SkippedRecords) and the count logged when
// the source ends. Note that Flink, with that option, sets the fields
// that fail to convert to NULL and keeps the row; here the whole record
// is skipped, so that a row is never silently different from its line.
//
// Position. A source's position is the file it reads and the byte offset
// of its next unread record, encoded as JSON (see Source.SnapshotPosition).
// Restoring checks that the file list still has that file at that index,
// that the offset is within it and starts a line; anything else is an
// error, never a silent restart.
package filesystem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func init() { connectors.Register(connector{}) }

type connector struct{}

func (connector) Name() string { return "filesystem" }

// WritesPartitions implements connectors.PartitionConnector: the sink
// writes a PARTITIONED BY table's rows into Hive-style col=value/ folders.
func (connector) WritesPartitions() {}

func (connector) Options() []connectors.OptionDef {
	return format.OptionDefs([]connectors.OptionDef{
		{Key: "path", Required: true, Description: "a file or a directory to read (a local path or a file:// URI)"},
		{Key: "format", Required: true, Description: "'json' (JSON lines), 'csv' or 'raw' (one column, a line per row); a sink may also write 'debezium-json', a changelog of Debezium events"},
		{Key: "scan.parallelism", Kind: config.Int, Min: 1, Description: "the source's parallelism; files are assigned to subtasks round-robin"},
		{Key: "source.monitor-interval", Description: "not supported: the source reads the files once (bounded)"},
		{Key: "sink.parallelism", Kind: config.Int, Min: 1, Description: "the sink's parallelism (the sink writes part files exactly once; see sink.go)"},
		{Key: "partition.default-name", Description: "the folder name of a NULL partition value of a PARTITIONED BY table (default __DEFAULT_PARTITION__)"},
		{Key: "sink.partition-commit.policy.kind", Description: "'success-file': a committed partition folder gets an empty success file ('metastore' and 'custom' are refused); absent: partitions are not committed"},
		{Key: "sink.partition-commit.success-file.name", Default: "_SUCCESS", Description: "the name of the success file"},
		{Key: "sink.partition-commit.trigger", Kind: config.Enum, Enum: []string{"process-time", "partition-time"}, Default: "process-time", Description: "when a partition whose rows are committed is committed: 'process-time', 'sink.partition-commit.delay' after its first row was written; 'partition-time', once the watermark passes the partition's time plus the delay"},
		{Key: "sink.partition-commit.delay", Kind: config.Duration, Default: "0 s", Description: "the delay of the partition-commit trigger"},
		{Key: "partition.time-extractor.timestamp-pattern", Description: "the partition's time for the partition-time trigger, from its values, e.g. '$dt $hm:00' (default: the first partition column's value); it must read as 'yyyy-MM-dd HH:mm:ss' or 'yyyy-MM-dd'"},
		{Key: "sink.rolling-policy.file-size", Description: "accepted (a memory size such as '128mb') and without effect: a part file is rolled at every checkpoint"},
		{Key: "sink.rolling-policy.rollover-interval", Kind: config.Duration, Description: "accepted and without effect: a part file is rolled at every checkpoint"},
		{Key: "sink.rolling-policy.check-interval", Kind: config.Duration, Description: "accepted and without effect: a part file is rolled at every checkpoint"},
		{Key: "sink.rolling-policy.inactivity-interval", Kind: config.Duration, Description: "accepted and without effect: a part file is rolled at every checkpoint"},
	}, format.JSONOptionDefs, format.CSVOptionDefs, format.RawOptionDefs)
}

type fileFormat int

const (
	formatJSON fileFormat = iota
	formatCSV
	formatRaw
)

type scan struct {
	t        *connectors.Table
	path     string
	format   fileFormat
	ignore   bool // <format>.ignore-parse-errors
	parallel int
	json     format.JSONOptions
	csv      format.CSVOptions
	raw      format.RawOptions
}

func (connector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	o := t.Options
	if _, ok := o["source.monitor-interval"]; ok {
		return nil, fmt.Errorf("option 'source.monitor-interval' is not supported: the filesystem source reads its files once and ends")
	}
	s := &scan{t: t}
	p, err := localPath(o["path"])
	if err != nil {
		return nil, err
	}
	s.path = p
	var fmtName string
	switch fmtName = o["format"]; fmtName {
	case "json":
		s.format = formatJSON
	case "csv":
		s.format = formatCSV
	case "raw":
		s.format = formatRaw
	case "debezium-json":
		return nil, fmt.Errorf("format 'debezium-json' is written by the filesystem sink but not read by its source: %w", connectors.ErrWriteOnly)
	default:
		return nil, fmt.Errorf("option 'format' must be 'json', 'csv' or 'raw', got '%s'", fmtName)
	}
	for k := range o {
		if f, _, ok := strings.Cut(k, "."); ok && (f == "json" || f == "csv" || f == "raw") && f != fmtName {
			return nil, fmt.Errorf("option '%s' does not apply to 'format' = '%s'", k, fmtName)
		}
	}
	if s.parallel, err = connectors.Int(o, "scan.parallelism", 0, 1); err != nil {
		return nil, err
	}
	if s.format != formatRaw {
		if s.ignore, err = connectors.Bool(o, fmtName+".ignore-parse-errors", false); err != nil {
			return nil, err
		}
	}
	switch s.format {
	case formatJSON:
		if s.json.FailOnMissingField, err = connectors.Bool(o, "json.fail-on-missing-field", false); err != nil {
			return nil, err
		}
		if s.json.FailOnMissingField && s.ignore {
			return nil, fmt.Errorf("options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be 'true'")
		}
	case formatCSV:
		if s.csv, err = format.ParseCSVOptions(o); err != nil {
			return nil, err
		}
	case formatRaw:
		if s.raw, err = format.ParseRawOptions(o, t.Columns); err != nil {
			return nil, err
		}
	}
	if s.format == formatCSV {
		if err := format.CheckCSVColumns(t.Columns); err != nil {
			return nil, err
		}
	}
	for _, c := range t.Columns {
		if s.format == formatCSV {
			break
		}
		if !format.Readable(c.Type, s.format == formatJSON) {
			return nil, fmt.Errorf("column '%s': type %s cannot be read from files in format '%s'", c.Name, c.Type, fmtName)
		}
	}
	return s, nil
}

// localPath turns the 'path' option into a local path.
func localPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("option 'path' must not be empty")
	}
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		// file:///tmp/x and file://localhost/tmp/x; file://host/x is not local.
		rest = strings.TrimPrefix(rest, "localhost")
		if !strings.HasPrefix(rest, "/") {
			return "", fmt.Errorf("option 'path': '%s' is not a local file URI", p)
		}
		return filepath.Clean(rest), nil
	}
	if i := strings.Index(p, "://"); i > 0 && !strings.ContainsAny(p[:i], "/\\") {
		return "", fmt.Errorf("option 'path': scheme '%s' is not supported; only local files are", p[:i])
	}
	return filepath.Clean(p), nil
}

func (s *scan) ChangelogMode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (s *scan) Parallelism() int                      { return s.parallel }
func (s *scan) Bounded() bool                         { return true }

var _ connectors.ProjectionPushDown = (*scan)(nil)

// Create makes the source of one subtask. It is a *Source.
func (s *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	return s.create(subtask, parallelism, nil)
}

// SupportsNestedProjection implements connectors.ProjectionPushDown: the
// decoders read whole columns.
func (s *scan) SupportsNestedProjection() bool { return false }

// CreateProjected implements connectors.ProjectionPushDown: the decoder
// converts only the columns fields. It is a *Source.
func (s *scan) CreateProjected(subtask, parallelism int, fields [][]int) (dataflow.Source, error) {
	cols := make([]int, len(fields))
	for i, f := range fields {
		if len(f) != 1 {
			return nil, fmt.Errorf("filesystem source: nested projection %v", f)
		}
		cols[i] = f[0]
	}
	return s.create(subtask, parallelism, cols)
}

// create makes the source of one subtask reading the columns fields
// (all when nil).
func (s *scan) create(subtask, parallelism int, fields []int) (dataflow.Source, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("filesystem source: subtask %d of %d", subtask, parallelism)
	}
	seen := make([]bool, len(s.t.Columns))
	for _, f := range fields {
		if f < 0 || f >= len(seen) || seen[f] {
			return nil, fmt.Errorf("filesystem source: projection %v of %d columns", fields, len(seen))
		}
		seen[f] = true
	}
	return &Source{sc: s, subtask: subtask, parallelism: parallelism, fields: fields}, nil
}

func (s *Source) newDecoder() format.Decoder {
	switch s.sc.format {
	case formatCSV:
		return format.NewCSVDecoder(s.sc.t.Columns, s.fields, s.sc.csv)
	case formatRaw:
		if s.fields != nil && len(s.fields) == 0 {
			return noColumns{} // the raw value's one column is not read (COUNT(*))
		}
		return format.NewRawCodec(s.sc.t.Columns, s.sc.raw)
	}
	return format.NewJSONDecoder(s.sc.t.Columns, s.fields, s.sc.json)
}

// noColumns decodes a raw record for a projection that reads no column:
// every record is a row, an empty one too, as the raw format's.
type noColumns struct{}

func (noColumns) Skip([]byte) bool               { return false }
func (noColumns) Decode([]byte, types.Row) error { return nil }

// width is the number of columns of a row of s.
func (s *Source) width() int {
	if s.fields != nil {
		return len(s.fields)
	}
	return len(s.sc.t.Columns)
}

// file is one file to read: its path and its name relative to 'path'
// (the base name when 'path' is a file), which positions record.
type file struct {
	path, name string
}

type listing struct {
	files []file
	err   error
}

// listFiles lists what 'path' names, in reading order.
func listFiles(root string) ([]file, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("filesystem source: option 'path': %w", err)
	}
	if fi.Mode().IsRegular() {
		return []file{{path: root, name: filepath.Base(root)}}, nil
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("filesystem source: option 'path': '%s' is neither a regular file nor a directory", root)
	}
	var files []file
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if hidden(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			// A symbolic link is read if it leads to a regular file.
			fi, err := os.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				return nil
			}
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, file{path: p, name: filepath.ToSlash(rel)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("filesystem source: listing '%s': %w", root, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, nil
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

// RecordError is a malformed record.
type RecordError struct {
	File   string // the file's path
	Line   int64  // 1-based line where the record starts
	Offset int64  // byte offset in the file where the record starts
	Err    error  // what was wrong
	Record string // the record's start, for the message
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("filesystem source: malformed record at %s:%d (byte offset %d): %v; the record: %s",
		e.File, e.Line, e.Offset, e.Err, e.Record)
}

// snippet quotes the start of a record for an error message.
func snippet(b []byte) string {
	const limit = 80
	if len(b) > limit {
		return strconv.Quote(string(b[:limit])) + "..."
	}
	return strconv.Quote(string(b))
}

func (e *RecordError) Unwrap() error { return e.Err }

// chunkRows is the most rows a chunk carries.
const chunkRows = 1024

// readBufferSize is the size of the buffered reader of each file.
const readBufferSize = 1 << 20

// position is where a source is: about to read the record at Offset of
// file Index (of the job's file list), which starts on line Line.
// Index == number of files means every file has been read.
type position struct {
	Version int    `json:"v"`
	Index   int    `json:"file_index"`
	File    string `json:"file"` // the file's name relative to 'path'; "" at the end
	Offset  int64  `json:"offset"`
	Line    int64  `json:"line"`
	Skipped int64  `json:"skipped"` // malformed records skipped so far
}

const positionVersion = 1

// Source reads the files of one subtask. Besides dataflow.Source it
// implements CheckpointableSource.
type Source struct {
	dataflow.BaseSource
	sc          *scan
	subtask     int
	parallelism int
	fields      []int // the table columns a row holds; nil for all
	log         *slog.Logger
	files       []file
	opened      bool

	mu  sync.Mutex // guards pos
	pos position   // position after the last row handed to Emit

	skipped  atomic.Int64
	firstErr error // the first skipped record's error
}

// Open lists the files. All subtasks of a job share one listing.
func (s *Source) Open(ctx *dataflow.OpContext) error {
	var l *listing
	if ctx != nil && ctx.Shared != nil {
		l = ctx.Shared.Get(fmt.Sprintf("filesystem.files/%p", s.sc), func() any {
			fs, err := listFiles(s.sc.path)
			return &listing{files: fs, err: err}
		}).(*listing)
	} else {
		fs, err := listFiles(s.sc.path)
		l = &listing{files: fs, err: err}
	}
	if l.err != nil {
		return l.err
	}
	s.files = l.files
	s.log = ctx.Logger()
	first := s.subtask
	if first > len(s.files) {
		first = len(s.files)
	}
	s.pos = position{Version: positionVersion, Index: first, Line: 1}
	if first < len(s.files) {
		s.pos.File = s.files[first].name
	}
	s.opened = true
	return nil
}

// Close releases nothing: files are closed as soon as they are read.
func (s *Source) Close() error { return nil }

// SkippedRecords returns the number of malformed records skipped so far
// (with '<format>.ignore-parse-errors'), those before a restored position
// included.
func (s *Source) SkippedRecords() int64 { return s.skipped.Load() }

// SnapshotPosition returns the position after the last row handed to
// Emit, as JSON: {"v":1,"file_index":i,"file":name,"offset":o,"line":n,"skipped":k}.
func (s *Source) SnapshotPosition(int64) ([]byte, error) {
	if !s.opened {
		return nil, errors.New("filesystem source: position asked before Open")
	}
	s.mu.Lock()
	p := s.pos
	s.mu.Unlock()
	return json.Marshal(p)
}

// RestorePosition makes Run continue from pos, a SnapshotPosition result
// of a source of the same table, subtask and parallelism. A position that
// does not fit the files is an error.
func (s *Source) RestorePosition(b []byte) error {
	if !s.opened {
		return errors.New("filesystem source: RestorePosition before Open")
	}
	var p position
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&p)
	if err == nil && dec.More() {
		err = errors.New("data after the position")
	}
	if err != nil {
		return fmt.Errorf("filesystem source: malformed position %q: %v", b, err)
	}
	if p.Version != positionVersion {
		return fmt.Errorf("filesystem source: position version %d is not supported (want %d)", p.Version, positionVersion)
	}
	if p.Offset < 0 || p.Line < 1 || p.Skipped < 0 || (p.Offset == 0 && p.Line != 1) {
		return fmt.Errorf("filesystem source: inconsistent position %s", b)
	}
	switch {
	case p.Index < 0 || p.Index > len(s.files):
		return fmt.Errorf("filesystem source: position names file '%s' (index %d), but '%s' now holds %d file(s)",
			p.File, p.Index, s.sc.path, len(s.files))
	case p.Index == len(s.files):
		if p.File != "" || p.Offset != 0 {
			return fmt.Errorf("filesystem source: position names file '%s' (index %d), but '%s' now holds %d file(s)",
				p.File, p.Index, s.sc.path, len(s.files))
		}
	default:
		f := s.files[p.Index]
		if f.name != p.File {
			return fmt.Errorf("filesystem source: position names file '%s' (index %d) of '%s', but the file there is now '%s'; files were added or removed",
				p.File, p.Index, s.sc.path, f.name)
		}
		if p.Index%s.parallelism != s.subtask {
			return fmt.Errorf("filesystem source: position names file '%s' (index %d), which subtask %d of %d does not read",
				p.File, p.Index, s.subtask, s.parallelism)
		}
		if err := checkLineStart(f.path, p.Offset); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.pos = p
	s.mu.Unlock()
	s.skipped.Store(p.Skipped)
	return nil
}

// checkLineStart verifies that off is the start of a line of the file (or its end).
func checkLineStart(path string, off int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("filesystem source: restoring position in '%s': %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("filesystem source: restoring position in '%s': %w", path, err)
	}
	if off > fi.Size() {
		return fmt.Errorf("filesystem source: position offset %d is beyond the end of '%s' (%d bytes)", off, path, fi.Size())
	}
	if off == 0 || off == fi.Size() {
		return nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], off-1); err != nil {
		return fmt.Errorf("filesystem source: restoring position in '%s': %w", path, err)
	}
	if b[0] != '\n' {
		return fmt.Errorf("filesystem source: position offset %d of '%s' is not at the start of a line", off, path)
	}
	return nil
}

// Run reads this subtask's files from the current position to the end.
func (s *Source) Run(ctx context.Context, out dataflow.SourceOutput) error {
	if !s.opened {
		return errors.New("filesystem source: Run before Open")
	}
	s.mu.Lock()
	start := s.pos
	s.mu.Unlock()
	r := reader{
		s:     s,
		ctx:   ctx,
		out:   out,
		dec:   s.newDecoder(),
		width: s.width(),
		br:    bufio.NewReaderSize(nil, readBufferSize),
	}
	r.newChunk()
	off, line := start.Offset, start.Line
	for idx := start.Index; idx < len(s.files); idx += s.parallelism {
		if err := r.readFile(idx, off, line); err != nil {
			return err
		}
		off, line = 0, 1
	}
	if err := r.flush(); err != nil {
		return err
	}
	if n := s.skipped.Load(); n > 0 {
		attrs := []any{"path", s.sc.path, "skipped", n}
		if s.firstErr != nil {
			attrs = append(attrs, "first_error", s.firstErr.Error())
		}
		s.log.Warn("filesystem source skipped malformed records", attrs...)
	}
	return nil
}

// reader is the state of one Run.
type reader struct {
	s     *Source
	ctx   context.Context
	out   dataflow.SourceOutput
	dec   format.Decoder
	width int
	br    *bufio.Reader
	long  []byte // a line longer than the buffer
	rec   []byte // a record of several lines

	vals  []types.Value // backing array of the chunk's rows
	chunk *dyntable.Chunk
	// where the chunk ends: the position after its last row
	idx       int
	off, line int64
}

func (r *reader) newChunk() {
	r.vals = make([]types.Value, chunkRows*r.width)
	r.chunk = &dyntable.Chunk{Changes: make([]dyntable.Change, 0, chunkRows)}
}

// flush emits the chunk, if it has rows, after advancing the position.
func (r *reader) flush() error {
	if len(r.chunk.Changes) == 0 {
		return nil
	}
	r.s.mu.Lock()
	r.s.pos = position{Version: positionVersion, Index: r.idx, File: r.s.files[r.idx].name,
		Offset: r.off, Line: r.line, Skipped: r.s.skipped.Load()}
	r.s.mu.Unlock()
	c := r.chunk
	r.newChunk()
	if err := r.out.Emit(c); err != nil {
		return err
	}
	return r.ctx.Err()
}

// nextLine returns the next line of the file, its '\n' included (absent
// at the end of a file that lacks it), or io.EOF. The line is valid until
// the next call.
func (r *reader) nextLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	switch err {
	case nil:
		return b, nil
	case io.EOF:
		if len(b) > 0 {
			return b, nil
		}
		return nil, io.EOF
	case bufio.ErrBufferFull:
		r.long = append(r.long[:0], b...)
		for {
			b, err = r.br.ReadSlice('\n')
			r.long = append(r.long, b...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		return r.long, nil
	}
	return nil, err
}

// utf8BOM is skipped at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// trimEOL drops a trailing "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

func (r *reader) readFile(idx int, off, line int64) error {
	f := r.s.files[idx]
	fh, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("filesystem source: %w", err)
	}
	defer fh.Close()
	if off > 0 {
		if _, err := fh.Seek(off, io.SeekStart); err != nil {
			return fmt.Errorf("filesystem source: %w", err)
		}
	}
	r.br.Reset(fh)
	defer r.br.Reset(nil)
	// Even a file without rows moves the position past itself.
	r.idx, r.off, r.line = idx, off, line
	w := r.width
	for {
		raw, err := r.nextLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("filesystem source: reading %s: %w", f.path, err)
		}
		recOff, recLine := r.off, r.line
		r.off += int64(len(raw))
		r.line++
		body := trimEOL(raw)
		if recOff == 0 && r.s.sc.format != formatRaw {
			body = bytes.TrimPrefix(body, utf8BOM)
		}
		if r.line&4095 == 0 {
			// Lines that give no rows never reach flush, which checks too.
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		if r.dec.Skip(body) {
			continue
		}
		n := len(r.chunk.Changes)
		row := types.Row(r.vals[n*w : (n+1)*w : (n+1)*w])
		err = r.dec.Decode(body, row)
		if err == format.ErrIncomplete {
			err = r.continueRecord(raw, row)
		}
		if err != nil {
			if _, ok := err.(*ioError); ok {
				return fmt.Errorf("filesystem source: reading %s: %w", f.path, err)
			}
			rerr := &RecordError{File: f.path, Line: recLine, Offset: recOff, Err: err, Record: snippet(body)}
			if !r.s.sc.ignore {
				return rerr
			}
			if r.s.skipped.Add(1) == 1 {
				r.s.firstErr = rerr
			}
			clear(row)
			continue
		}
		r.chunk.Changes = append(r.chunk.Changes, dyntable.Change{Kind: dyntable.Insert, Row: row})
		if len(r.chunk.Changes) == chunkRows {
			if err := r.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

var errUnterminated = errors.New("quoted field not closed before the end of the file")

type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// continueRecord reads the further lines of a record that does not end
// with its first line (a quoted CSV field holding a line break).
func (r *reader) continueRecord(first []byte, row types.Row) error {
	r.rec = append(r.rec[:0], first...)
	for {
		raw, err := r.nextLine()
		if err == io.EOF {
			return errUnterminated
		}
		if err != nil {
			return &ioError{err}
		}
		r.off += int64(len(raw))
		r.line++
		r.rec = append(r.rec, raw...)
		clear(row)
		if err := r.dec.Decode(trimEOL(r.rec), row); err != format.ErrIncomplete {
			return err
		}
	}
}
