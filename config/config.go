// Package config is the one place that lists every session option, with
// its default and meaning. SET and RESET check keys and values against
// it, `SET;` lists it, and the options reference in docs/ is generated
// from it (go run ./cmd/streamsql options). Option names are Flink's
// wherever Flink has one.
package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zone names resolve without the host's zoneinfo
)

// Kind is the type of an option's value.
type Kind uint8

// Option value kinds.
const (
	String Kind = iota
	Int
	Bool
	Duration
	Enum
	TimeZone // a zone name for ParseTimeZone
)

// Def documents one option.
type Def struct {
	Key         string
	Kind        Kind
	Default     string
	Enum        []string // allowed values of an Enum
	Description string
	// Pending marks an option that is accepted and kept, but that no part
	// of the engine acts on yet; SET says so instead of pretending.
	Pending bool
	// Note, when set, is what SET says instead of Pending's note: why the
	// option, which Flink scripts set, changes nothing here.
	Note string
}

// Defs is every session option.
var Defs = []Def{
	{Key: "parallelism.default", Kind: Int, Default: "1", Description: "Number of parallel subtasks of each operator that is not fixed by its connector."},
	{Key: "cluster.partitions", Kind: Int, Default: "4", Description: "Cluster mode (streamsql worker): partitions of every internal topic between stages, which is the number of tasks of each stage and so the most workers that can share a stage's work; fixed when the job first starts. Between 1 and 128 (the key groups)."},
	{Key: "pipeline.name", Kind: String, Default: "", Description: "Name of the jobs the session submits; defaults to a name derived from the statement."},
	{Key: "pipeline.max-parallelism", Kind: Int, Default: "128", Description: "Number of key groups keyed state is split into; the upper bound of parallelism.", Pending: true},
	{Key: "table.exec.state.ttl", Kind: Duration, Default: "0 ms", Description: "Keyed state of regular aggregations, joins, ranks, deduplication and ChangelogNormalize not written for this long may be dropped (windows and joins over time clean by the watermark instead); 0 keeps state forever."},
	{Key: "table.exec.mini-batch.enabled", Kind: Bool, Default: "false", Description: "Mini-batch execution of group aggregations: each buffers its input rows per group and folds them into its state once per batch (one state read and write, and at most one update emitted, per group and batch). A batch ends after table.exec.mini-batch.allow-latency, when table.exec.mini-batch.size rows are buffered, on a watermark, before a checkpoint barrier and at end of input; both options must be set above 0."},
	{Key: "table.exec.mini-batch.allow-latency", Kind: Duration, Default: "0 ms", Description: "Longest time a mini-batch buffers rows (processing time); a watermark this much event time past the one that ended the last batch also ends it. Must be above 0 when table.exec.mini-batch.enabled is true."},
	{Key: "table.exec.mini-batch.size", Kind: Int, Default: "0", Description: "Most input rows a mini-batch buffers per operator subtask before it ends. Must be above 0 when table.exec.mini-batch.enabled is true."},
	{Key: "table.optimizer.agg-phase-strategy", Kind: Enum, Default: "AUTO", Enum: []string{"AUTO", "ONE_PHASE", "TWO_PHASE"}, Description: "With mini-batch on, AUTO and TWO_PHASE split a group aggregation whose aggregates can be merged (COUNT; SUM and AVG of INT, BIGINT and DOUBLE; MIN and MAX of INT and BIGINT; no other DISTINCT than MIN and MAX's) over an insert-only input into a LocalGroupAggregate before the hash exchange, which pre-aggregates each batch without state, and a GlobalGroupAggregate after it; ONE_PHASE never splits."},
	{Key: "table.optimizer.distinct-agg.split.enabled", Kind: Bool, Default: "false", Description: "Flink's split distinct aggregation: a group aggregation with COUNT(DISTINCT x) or SUM(DISTINCT x), whose aggregates are all COUNT, SUM, MIN or MAX (FILTER allowed), runs in two levels: a partial one grouped by the group keys and MOD(HASH_CODE(x), table.optimizer.distinct-agg.split.bucket-num), which spreads a hot group's distinct values over many keys, and a final one that sums (or takes the MIN/MAX of) the partial results per group. Distinct aggregates of different arguments are computed on copies of each row (Expand), one per argument. Aggregations with AVG or other functions, and window aggregations, stay in one level."},
	{Key: "table.optimizer.distinct-agg.split.bucket-num", Kind: Int, Default: "1024", Description: "Buckets of the split distinct aggregation (see table.optimizer.distinct-agg.split.enabled); must be above 0 when the split is on."},
	{Key: "table.exec.source.idle-timeout", Kind: Duration, Default: "0 ms", Description: "An input channel (a source subtask, or any operator's input) without data or watermarks for this long stops holding back the watermark of the operator it feeds, until it sends again; 0 disables."},
	{Key: "pipeline.auto-watermark-interval", Kind: Duration, Default: "200 ms", Description: "How often the watermark assigner of an unbounded source emits a watermark (periodic watermarks); over a bounded source it emits one after every chunk, so results do not depend on timing. 0: after every chunk everywhere."},
	{Key: "execution.runtime-mode", Kind: Enum, Default: "streaming", Enum: []string{"streaming", "batch"}, Description: "Only streaming execution is supported; bounded inputs simply end. 'batch' is accepted for Flink scripts and runs in streaming mode.",
		Note: "streamsql runs every job in streaming mode: bounded inputs end and tables reach the same final contents, but queries show their changelog, not only final rows"},
	{Key: "execution.attached", Kind: Bool, Default: "true", Description: "Accepted for Flink scripts: jobs always run inside the streamsql process.", Pending: true,
		Note: "jobs always run inside this process, attached; the option changes nothing here"},
	{Key: "table.dml-sync", Kind: Bool, Default: "false", Description: "When true, an INSERT (or statement set) returns only once its job has finished, as in Flink; a script then runs the next statement after it even for an unbounded job."},
	{Key: "table.local-time-zone", Kind: TimeZone, Default: "default", Description: "The session time zone: TIMESTAMP_LTZ values are shown, cast to and from TIMESTAMP, DATE and STRING, and taken apart (EXTRACT, DATE_FORMAT, HOUR) in it; CURRENT_DATE, LOCALTIMESTAMP and FROM_UNIXTIME read the clock in it; windows over a TIMESTAMP_LTZ time attribute are aligned to its midnight. A zone name such as 'Asia/Shanghai' or 'UTC', or an offset 'GMT+08:00'; 'default' is the system's zone (Flink: the JVM's default zone). Jobs keep the zone they were planned in."},
	{Key: "table.dynamic-table-options.enabled", Kind: Bool, Default: "true", Description: "Enables the OPTIONS hint, t /*+ OPTIONS('k' = 'v') */, which overrides table options for one use of the table, as in Flink; when false a hint is an error."},
	{Key: "table.sql-dialect", Kind: Enum, Default: "default", Enum: []string{"default"}, Description: "Only Flink's default SQL dialect is supported (not 'hive')."},
	{Key: "sql-client.verbose", Kind: Bool, Default: "false", Description: "Accepted for Flink scripts; errors are always printed in full, without Java stack traces.", Pending: true,
		Note: "errors are always printed in full; the option changes nothing here"},
	{Key: "sql-client.display.max-column-width", Kind: Int, Default: "30", Description: "Widest column the client prints before truncating (Flink's name; table.display.max-column-width is its older name)."},
	{Key: "sql-client.display.print-time-cost", Kind: Bool, Default: "false", Description: "Accepted for Flink scripts; the client does not print statement times.", Pending: true},
	{Key: "sql-client.display.show-line-numbers", Kind: Bool, Default: "false", Description: "Accepted for Flink scripts; the prompt shows no line numbers.", Pending: true},
	{Key: "sql-client.display.color-schema", Kind: String, Default: "DEFAULT", Description: "Accepted for Flink scripts; the client has one color scheme.", Pending: true},
	{Key: "execution.checkpointing.interval", Kind: Duration, Default: "0 ms", Description: "Interval between checkpoints; 0 disables checkpointing."},
	{Key: "execution.checkpointing.timeout", Kind: Duration, Default: "10 min", Description: "A checkpoint not complete after this long is aborted."},
	{Key: "execution.checkpointing.min-pause", Kind: Duration, Default: "0 ms", Description: "Minimum time between the end of one checkpoint and the start of the next."},
	{Key: "state.checkpoints.dir", Kind: String, Default: "", Description: "Where each job keeps its checkpoints, in a folder named after the job: a directory, or a URL: file:///dir (a shared volume) or s3://bucket/prefix?region=... (see docs/cluster.md, Checkpoint storage)."},
	{Key: "state.checkpoints.num-retained", Kind: Int, Default: "3", Description: "Completed checkpoints kept per job."},
	{Key: "execution.savepoint.path", Kind: String, Default: "", Description: "Savepoint to restore the next submitted job from: a directory or a URL, as state.checkpoints.dir."},
	{Key: "state.backend.type", Kind: Enum, Default: "auto", Enum: []string{"auto", "hashmap", "pebble"}, Description: "Where keyed state lives: 'hashmap' (Go maps on the heap; asynchronous, incremental checkpoints), 'pebble' (Pebble on local disk with a write-back cache, for state larger than memory), or 'auto' (pebble when checkpointing is on, else hashmap). See docs/state.md."},
	{Key: "state.checkpoints.start-fresh", Kind: Bool, Default: "false", Description: "Start a job from scratch even though checkpoints of a different plan, or only invalid ones, exist under its name (streamsql's own option)."},
	{Key: "state.backend.cache-entries", Kind: Int, Default: "100000", Description: "Entries of keyed state kept in memory per operator subtask in front of Pebble; bounds memory for state larger than memory."},
	{Key: "state.backend.pebble.block-cache-mb", Kind: Int, Default: "8", Description: "Pebble block cache per operator subtask, in MiB."},
	{Key: "state.backend.pebble.memtable-mb", Kind: Int, Default: "16", Description: "Pebble memtable size per operator subtask, in MiB (up to two exist at a time)."},
	{Key: "sql-client.execution.result-mode", Kind: Enum, Default: "tableau", Enum: []string{"tableau", "changelog", "table"}, Description: "How the client shows query results."},
	{Key: "sql-client.display.max-table-result-rows", Kind: Int, Default: "1000000", Description: "Rows the table result mode keeps; past it the oldest are dropped."},
	{Key: "table.display.max-column-width", Kind: Int, Default: "30", Description: "Widest column the client prints before truncating."},
	{Key: "test.crash.in-checkpoint", Kind: Int, Default: "0", Description: "Test hook of the kill -9 tests (streamsql's own option): the process exits with status 137 inside its k-th checkpoint, after the snapshots are written and before the metadata that makes the checkpoint count; 0 never."},
	{Key: "test.crash.before-commit", Kind: Int, Default: "0", Description: "Test hook of the kill -9 tests (streamsql's own option): the process exits with status 137 at its k-th commit round of a two-phase-commit sink, with the transactions of a completed checkpoint prepared and none committed; 0 never."},
}

// Lookup returns the definition of key.
func Lookup(key string) (Def, bool) {
	for _, d := range Defs {
		if d.Key == key {
			return d, true
		}
	}
	return Def{}, false
}

// Config is a session's option values.
type Config struct {
	set map[string]string
}

// New returns a Config with every option at its default.
func New() *Config { return &Config{set: map[string]string{}} }

// Clone copies c.
func (c *Config) Clone() *Config {
	n := New()
	for k, v := range c.set {
		n.set[k] = v
	}
	return n
}

// Set checks and sets one option. It returns a note for options the
// engine does not act on yet.
func (c *Config) Set(key, value string) error {
	_, err := c.SetNote(key, value)
	return err
}

// SetNote is Set, also returning a note for the user ("" if none).
func (c *Config) SetNote(key, value string) (string, error) {
	if err := c.set1(key, value); err != nil {
		return "", err
	}
	d, _ := Lookup(key)
	switch {
	case d.Note != "" && (d.Pending || d.Kind == Enum && c.Get(key) != d.Default):
		return d.Note, nil
	case d.Pending:
		return fmt.Sprintf("'%s' is recorded but has no effect yet in this version", key), nil
	}
	return "", nil
}

func (c *Config) set1(key, value string) error {
	d, ok := Lookup(key)
	if !ok {
		return fmt.Errorf("unknown option '%s'%s", key, suggest(key))
	}
	if err := d.check(value); err != nil {
		return fmt.Errorf("option '%s': %w", key, err)
	}
	if d.Kind == Enum {
		for _, e := range d.Enum {
			if strings.EqualFold(value, e) {
				value = e // Flink's enum values are case-insensitive: 'TABLEAU' is 'tableau'
			}
		}
	}
	c.set[key] = value
	return nil
}

// Reset restores key to its default, or every option when key is "".
func (c *Config) Reset(key string) error {
	if key == "" {
		c.set = map[string]string{}
		return nil
	}
	if _, ok := Lookup(key); !ok {
		return fmt.Errorf("unknown option '%s'%s", key, suggest(key))
	}
	delete(c.set, key)
	return nil
}

// Get returns the value of key, or its default.
func (c *Config) Get(key string) string {
	if v, ok := c.set[key]; ok {
		return v
	}
	d, ok := Lookup(key)
	if !ok {
		panic("config: unknown option " + key) // a programming error
	}
	return d.Default
}

// IsSet reports whether key was set in this session.
func (c *Config) IsSet(key string) bool {
	_, ok := c.set[key]
	return ok
}

// Int returns an Int option.
func (c *Config) Int(key string) int {
	n, _ := strconv.Atoi(c.Get(key)) // checked by Set
	return n
}

// Bool returns a Bool option.
func (c *Config) Bool(key string) bool {
	b, _ := ParseBool(c.Get(key)) // checked by Set
	return b
}

// Duration returns a Duration option.
func (c *Config) Duration(key string) time.Duration {
	d, _ := ParseDuration(c.Get(key)) // checked by Set
	return d
}

// Location returns the session time zone, table.local-time-zone.
func (c *Config) Location() *time.Location {
	loc, err := ParseTimeZone(c.Get("table.local-time-zone"))
	if err != nil {
		panic("config: " + err.Error()) // checked by Set
	}
	return loc
}

// ParseTimeZone reads a time zone the way Flink's table.local-time-zone
// takes it: 'default' (the system's zone), a region name of the IANA
// database ('Asia/Shanghai', 'America/Los_Angeles'), 'UTC' or 'Z', or a
// fixed offset 'GMT+08:00', 'UTC-8', '+05:30'. Java's three-letter
// abbreviations ('PST', 'CST') are refused, as Flink refuses them: most
// are ambiguous. It is the one zone parser of the session option and of
// the functions that take a zone name.
func ParseTimeZone(s string) (*time.Location, error) {
	name := strings.TrimSpace(s)
	switch {
	case strings.EqualFold(name, "default"):
		return time.Local, nil
	case name == "UTC" || name == "Z" || name == "GMT" || name == "UT":
		return time.UTC, nil
	}
	if loc, ok := parseZoneOffset(name); ok {
		return loc, nil
	}
	if name == "" || name == "Local" || !strings.Contains(name, "/") && name != "EST5EDT" && name != "CST6CDT" && name != "MST7MDT" && name != "PST8PDT" {
		return nil, fmt.Errorf("'%s' is not a time zone: use a region name such as 'Asia/Shanghai', 'UTC', an offset such as 'GMT+08:00', or 'default'", s)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone '%s': use a region name such as 'Asia/Shanghai', 'UTC', an offset such as 'GMT+08:00', or 'default'", s)
	}
	return loc, nil
}

// parseZoneOffset reads [GMT|UTC|UT]+H[H][[:]MM]; the zone is named as
// written, as Java's ZoneId.of names it.
func parseZoneOffset(s string) (*time.Location, bool) {
	rest := s
	for _, p := range []string{"GMT", "UTC", "UT"} {
		if strings.HasPrefix(rest, p) {
			rest = rest[len(p):]
			break
		}
	}
	if len(rest) < 2 || rest[0] != '+' && rest[0] != '-' {
		return nil, false
	}
	sign, digits := rest[0], strings.ReplaceAll(rest[1:], ":", "")
	if len(digits) == 0 || len(digits) > 4 || len(digits) == 3 && !strings.Contains(rest, ":") {
		return nil, false
	}
	var h, m int
	switch {
	case len(digits) <= 2:
		n, err := strconv.Atoi(digits)
		if err != nil {
			return nil, false
		}
		h = n
	default:
		hd := digits[:len(digits)-2]
		n1, err1 := strconv.Atoi(hd)
		n2, err2 := strconv.Atoi(digits[len(digits)-2:])
		if err1 != nil || err2 != nil {
			return nil, false
		}
		h, m = n1, n2
	}
	if h > 18 || m > 59 || h == 18 && m > 0 {
		return nil, false
	}
	off := h*3600 + m*60
	if sign == '-' {
		off = -off
	}
	return time.FixedZone(s, off), true
}

// Entries lists every option with its current value, sorted by key, and
// whether it was set in this session.
func (c *Config) Entries() [][3]string {
	var out [][3]string
	for _, d := range Defs {
		v, set := c.set[d.Key]
		if !set {
			v = d.Default
		}
		mark := ""
		if set {
			mark = "set"
		}
		out = append(out, [3]string{d.Key, v, mark})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func (d Def) check(v string) error {
	switch d.Kind {
	case Int:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("'%s' is not a non-negative integer", v)
		}
		if d.Key == "parallelism.default" && (n < 1 || n > 128) {
			return fmt.Errorf("parallelism must be between 1 and 128, got %d", n)
		}
		if d.Key == "cluster.partitions" && (n < 1 || n > 128) {
			return fmt.Errorf("cluster.partitions must be between 1 and 128 (the key groups), got %d", n)
		}
	case Bool:
		if _, err := ParseBool(v); err != nil {
			return err
		}
	case Duration:
		if _, err := ParseDuration(v); err != nil {
			return err
		}
	case TimeZone:
		if _, err := ParseTimeZone(v); err != nil {
			return err
		}
	case Enum:
		for _, e := range d.Enum {
			if strings.EqualFold(v, e) {
				return nil
			}
		}
		return fmt.Errorf("'%s' is not one of %s", v, strings.Join(d.Enum, ", "))
	}
	return nil
}

// ParseBool reads a boolean option the way Flink does: 'true' or 'false'
// in any case, surrounding spaces ignored. It is the one boolean parser
// of every option (session options and connector options alike).
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("'%s' is not true or false", s)
}

// ParseMemorySize reads Flink's MemorySize: a number with an optional
// unit b, k/kb, m/mb, g/gb or t/tb (and their long names), in any case,
// as bytes. A bare number is bytes, as in Flink.
func ParseMemorySize(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("'%s' is not a memory size such as '128mb'", v)
	}
	var n int64
	if _, err := fmt.Sscan(s[:i], &n); err != nil {
		return 0, fmt.Errorf("'%s' is not a memory size such as '128mb'", v)
	}
	mult := map[string]int64{"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
		"t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40}[strings.TrimSpace(s[i:])]
	if mult == 0 {
		return 0, fmt.Errorf("'%s' is not a memory size: unknown unit (b, kb, mb, gb, tb)", v)
	}
	return n * mult, nil
}

// ParseDuration reads durations the way Flink writes them: "10 s",
// "500 ms", "1 min", "2 h", "1 d", a bare number of milliseconds (Flink's
// rule: "0" and "1500" are milliseconds), or Go's form ("1m30s"). It is
// the one duration parser of every option, session and connector alike.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if d, err := time.ParseDuration(t); err == nil && d >= 0 {
		return d, nil
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("'%s' is not a duration (e.g. '10 s', '500 ms', '1 min')", s)
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	var m time.Duration
	switch unit {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		m = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		m = time.Second
	case "min", "mins", "minute", "minutes", "m":
		m = time.Minute
	case "h", "hour", "hours":
		m = time.Hour
	case "d", "day", "days":
		m = 24 * time.Hour
	default:
		return 0, fmt.Errorf("'%s' is not a duration (e.g. '10 s', '500 ms', '1 min')", s)
	}
	return time.Duration(n * float64(m)), nil
}

func suggest(key string) string {
	best, bestD := "", 4
	for _, d := range Defs {
		if dd := distance(key, d.Key); dd < bestD {
			best, bestD = d.Key, dd
		}
	}
	if best == "" {
		return "; SET; lists every option"
	}
	return fmt.Sprintf("; did you mean '%s'?", best)
}

// distance is the Levenshtein distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Markdown renders the options reference.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# Session options\n\nGenerated by `streamsql options` from config/config.go. Set with `SET 'key' = 'value';`.\nOptions marked *pending* are accepted but not acted on yet.\n\n| Key | Default | Meaning |\n|---|---|---|\n")
	for _, d := range Defs {
		def := d.Default
		if def == "" {
			def = "(none)"
		}
		desc := d.Description
		if d.Pending {
			desc = "*pending* — " + desc
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", d.Key, def, desc)
	}
	return b.String()
}
