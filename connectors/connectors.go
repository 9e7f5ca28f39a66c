// Package connectors owns the contract between the engine and external
// systems: connectors register themselves by name ('connector' = '...'),
// declare their options, and create sources and sinks for a table.
//
// The contract is deliberately small. A source connector produces a
// ScanSource, which tells the planner its changelog mode and creates one
// dataflow.Source per subtask; a sink connector produces a TableSink,
// which tells the planner which encoding it writes and creates one
// dataflow.Operator per subtask. Extra abilities (checkpointable
// positions, two-phase commit, lookups) are optional interfaces found by
// type assertion, as database/sql/driver does, so that adding one never
// breaks an existing connector.
//
// Each connector lives in its own folder (connectors/values,
// connectors/datagen, ...) and registers itself from an init function;
// importing connectors/all links every built-in connector.
package connectors

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Column is one column of a table.
type Column struct {
	Name string
	Type types.Type
}

// Table is what a connector sees of a catalog table.
type Table struct {
	Name       string
	Columns    []Column
	PrimaryKey []int // column indexes; nil if none
	// Options are the table's WITH options, 'connector' included.
	Options map[string]string
	// HasWatermark is set when the table declares a WATERMARK; sources
	// that can should then emit fine-grained chunks (see values).
	HasWatermark bool
	// Metadata are the table's METADATA columns, in the order declared. A
	// source appends their values to each row, after Columns; a sink
	// receives the values of the written ones (WrittenMetadata) after
	// Columns. Only a MetadataConnector's tables have any.
	Metadata []MetadataColumn
	// PartitionKeys are the PARTITIONED BY columns (indexes into
	// Columns); only a PartitionConnector's tables have any.
	PartitionKeys []int
	// Base is, for a table read or written under an OPTIONS hint (Flink's
	// dynamic table options), the catalog's table this one copies with
	// other Options; nil otherwise. See Identity.
	Base *Table
}

// Identity is the table as the catalog holds it: Base for a copy made
// for an OPTIONS hint, else t. Connectors that keep data per table key
// it by Identity, so a hinted read sees the table's rows.
func (t *Table) Identity() *Table {
	if t.Base != nil {
		return t.Base
	}
	return t
}

// PartitionConnector is a connector whose sink writes PARTITIONED BY
// tables, e.g. the filesystem connector's Hive-style col=value/ folders.
type PartitionConnector interface {
	Connector
	// WritesPartitions is a marker.
	WritesPartitions()
}

// MetadataColumn is a column whose value is metadata of the record the
// row came from: name type METADATA [FROM 'key'] [VIRTUAL].
type MetadataColumn struct {
	Name, Key string
	Type      types.Type
	Virtual   bool
}

// MetadataConnector is a connector whose source can read record
// metadata (Flink's readable metadata, e.g. Kafka's 'timestamp').
type MetadataConnector interface {
	Connector
	// MetadataKeys maps each readable key to its type.
	MetadataKeys() map[string]types.Type
}

// WritableMetadataConnector is a MetadataConnector whose sink also
// writes some metadata (Flink's writable metadata, e.g. Kafka's
// 'headers'). An INSERT into a table with a metadata column that is
// not VIRTUAL writes it; the planner refuses one whose key is not here.
type WritableMetadataConnector interface {
	MetadataConnector
	// WritableMetadataKeys maps each writable key to its type.
	WritableMetadataKeys() map[string]types.Type
}

// WrittenMetadata are the metadata columns an INSERT writes: those not
// declared VIRTUAL, in the order declared. A sink's rows hold Columns
// followed by these.
func (t *Table) WrittenMetadata() []MetadataColumn {
	var out []MetadataColumn
	for _, m := range t.Metadata {
		if !m.Virtual {
			out = append(out, m)
		}
	}
	return out
}

// Types returns the column types.
func (t *Table) Types() []types.Type {
	ts := make([]types.Type, len(t.Columns))
	for i, c := range t.Columns {
		ts[i] = c.Type
	}
	return ts
}

// Env is the engine-side environment connectors may use.
type Env struct {
	// Stdout is where print sinks write.
	Stdout io.Writer
	// Session holds session-scoped objects such as the rows of values
	// tables. It outlives jobs.
	Session *dataflow.Shared
	// Zone, when set, returns the session time zone
	// (table.local-time-zone), in which the print sink shows
	// TIMESTAMP_LTZ values; a sink reads it once, when it is made.
	Zone func() *time.Location
}

// LocalZone returns env's session time zone, UTC when it has none.
func (env *Env) LocalZone() *time.Location {
	if env == nil || env.Zone == nil {
		return time.UTC
	}
	return env.Zone()
}

// OptionDef declares one connector option: its key, type, default and
// meaning. The declarations are the single source of CheckOptions'
// validation, `streamsql options`, docs/options.md, the REPL's completion
// of keys inside WITH ( and HELP's connector list.
type OptionDef struct {
	Key string
	// Kind is the value's type (config.String when zero); CheckOptions
	// refuses a value that does not parse as it.
	Kind        config.Kind
	Default     string   // "" when there is none
	Enum        []string // the values of a config.Enum option
	Min         int      // the least value of a config.Int option (0 or 1)
	Required    bool
	Description string
	// Prefix marks a family of keys, e.g. "fields.#.kind" where # stands
	// for a column name.
	Prefix bool
}

// Connector is the common part of every connector.
type Connector interface {
	// Name is the value of the 'connector' option.
	Name() string
	// Options lists every option the connector accepts.
	Options() []OptionDef
}

// SourceConnector can read a table.
type SourceConnector interface {
	Connector
	// NewScan validates t's options and returns the table's source.
	NewScan(t *Table, env *Env) (ScanSource, error)
}

// ScanSource is a table read as a stream.
type ScanSource interface {
	// ChangelogMode is the kinds of rows the source produces.
	ChangelogMode() dyntable.ChangelogMode
	// Parallelism is the fixed number of subtasks, or 0 to follow the
	// job's default.
	Parallelism() int
	// Bounded reports whether the source ends by itself.
	Bounded() bool
	// Create makes the source of one subtask.
	Create(subtask, parallelism int) (dataflow.Source, error)
}

// ProjectionPushDown is an optional interface of ScanSources that can
// read only some of the table's columns (Flink's
// SupportsProjectionPushDown), e.g. a format that skips the fields of
// the other columns instead of converting them. Without it the planner
// narrows the source's rows after they are read.
//
// The planner calls CreateProjected instead of Create when its scan
// reads fewer columns than the table has, or only some fields of a ROW
// column. One ScanSource may serve scans of different projections (a
// table read twice in one job).
type ProjectionPushDown interface {
	// SupportsNestedProjection reports whether CreateProjected takes
	// paths into ROW columns (Flink's supportsNestedProjection): a
	// source that builds its ROW values field by field can then build
	// only the fields read, as top-level columns.
	SupportsNestedProjection() bool
	// CreateProjected is Create for a source whose rows hold only the
	// given fields, in row order. Each field is a path: its first
	// element is a table column (an index into Table.Columns); a longer
	// path (only when SupportsNestedProjection) reads a field of that
	// ROW column, the next element indexing the ROW's fields, and so on
	// into nested ROWs; a field is NULL when a ROW on its path is. No
	// two paths are equal and none is a prefix of another. Values of the
	// other columns are not read: a record whose other columns would not
	// convert to their types is not an error.
	//
	// The planner does not push a projection into a source that also
	// implements WatermarkPushDown: a pushed watermark is evaluated on
	// whole table rows.
	CreateProjected(subtask, parallelism int, fields [][]int) (dataflow.Source, error)
}

// UpdatesHinter is an optional interface of an append-only TableSink:
// how a table of its connector can take an updating query, for the
// planner's error (e.g. "declare a PRIMARY KEY"). Without it the error
// lists the sinks that take updates.
type UpdatesHinter interface {
	UpdatesHint() string
}

// SinkConnector can write a table.
type SinkConnector interface {
	Connector
	// NewSink validates t's options and returns the table's sink.
	NewSink(t *Table, env *Env) (TableSink, error)
}

// TableSink is a table written from a changelog.
type TableSink interface {
	// Encoding is how the sink writes; the planner rejects a query whose
	// changelog mode the encoding cannot take.
	Encoding() dyntable.SinkEncoding
	// Parallelism is the fixed number of subtasks, or 0 to follow the
	// job's default.
	Parallelism() int
	// Create makes the sink operator of one subtask. Its input rows have
	// the table's columns, in order.
	Create(subtask, parallelism int) (dataflow.Operator, error)
}

// ErrWriteOnly is wrapped by a NewScan error for a table that its
// connector can write but not read (a sink-only format): declaring such
// a table succeeds, and reading it fails with the error.
var ErrWriteOnly = errors.New("the table can only be written")

// StatefulSink is an optional interface of TableSinks whose operators
// keep state in checkpoints, as every two-phase-commit sink does (see
// connectors/twophase): the planner marks their node stateful, so that
// each checkpoint snapshots it and a restore gives it back.
type StatefulSink interface {
	TableSink
	KeepsState() bool
}

// ValuesInserter is an optional interface of ScanSources whose rows can
// be added with INSERT INTO t VALUES (the values connector).
type ValuesInserter interface {
	// ValuesColumns are the types each VALUES tuple must have.
	ValuesColumns() []types.Type
	// InsertValues appends rows, already cast to ValuesColumns.
	InsertValues(rows []types.Row) error
}

var (
	mu       sync.RWMutex
	registry = map[string]Connector{}
)

// Register makes a connector available under its name. It panics on a
// duplicate, which is a programming error at init time.
func Register(c Connector) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[c.Name()]; dup {
		panic("connectors: duplicate connector " + c.Name())
	}
	registry[c.Name()] = c
}

// Lookup returns the named connector.
func Lookup(name string) (Connector, error) {
	mu.RLock()
	defer mu.RUnlock()
	c, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown connector '%s'; available: %s", name, strings.Join(namesLocked(), ", "))
	}
	return c, nil
}

// Names lists the registered connectors, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	var ns []string
	for n := range registry {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// CheckOptions rejects options the connector does not declare and
// reports missing required ones, naming them as Flink does.
func CheckOptions(c Connector, opts map[string]string) error {
	defs := c.Options()
	var unknown []string
	for k := range opts {
		if k == "connector" {
			continue
		}
		if _, ok := findOption(defs, k); !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		var known []string
		for _, d := range defs {
			known = append(known, d.Key)
		}
		return fmt.Errorf("unsupported option(s) for connector '%s': '%s' (supported: %s)",
			c.Name(), strings.Join(unknown, "', '"), strings.Join(known, ", "))
	}
	for _, d := range defs {
		if d.Required && !d.Prefix {
			if _, ok := opts[d.Key]; !ok {
				return fmt.Errorf("connector '%s' requires option '%s' (%s)", c.Name(), d.Key, d.Description)
			}
		}
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first bad option in key order, every time
	for _, k := range keys {
		if d, ok := findOption(defs, k); ok {
			if err := checkValue(d, k, opts); err != nil {
				return err
			}
		}
	}
	return nil
}

// findOption returns the declaration of key k.
func findOption(defs []OptionDef, k string) (OptionDef, bool) {
	for _, d := range defs {
		if !d.Prefix {
			if d.Key == k {
				return d, true
			}
			continue
		}
		// "fields.#.kind" matches "fields.<anything>.kind".
		pre, post, _ := strings.Cut(d.Key, "#")
		if strings.HasPrefix(k, pre) && strings.HasSuffix(k, post) && len(k) > len(pre)+len(post) {
			return d, true
		}
	}
	return OptionDef{}, false
}

// Option returns opts[key] or the default.
func Option(opts map[string]string, key, def string) string {
	if v, ok := opts[key]; ok {
		return v
	}
	return def
}
