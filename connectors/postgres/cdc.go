package postgres

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	sessconfig "github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// 'connector' = 'postgres-cdc' reads tables as changelogs through
// logical replication (the pgoutput plugin), with Flink CDC's option
// names (cdc_source.go, cdc_stream.go):
//
//   - a publication ('debezium.publication.name') lists the captured
//     tables; it is created if missing;
//   - a replication slot ('slot.name') keeps the server's WAL from the
//     position the job has confirmed. The slot is confirmed only when a
//     checkpoint completes, up to that checkpoint's position, so the
//     server never frees WAL that a restore would need;
//   - initial mode creates the slot with an exported snapshot and reads
//     the tables in a transaction on that snapshot: the snapshot is
//     exactly the state at the slot's consistent point, from which the
//     stream starts, so there is no gap and no duplicate. Checkpoints are
//     declined until the snapshot is emitted;
//   - 'scan.startup.mode' takes Flink CDC's postgres-cdc modes: initial,
//     latest-offset, committed-offset (an existing slot from its
//     confirmed position) and snapshot (a bounded read in one REPEATABLE
//     READ transaction, no slot). specific-offset and timestamp, which
//     mysql-cdc has, are refused by name: a slot never goes back before
//     its confirmed position, and pgoutput cannot seek by time.
//
// Updates and deletes carry the whole old row only with REPLICA
// IDENTITY FULL, which the source needs for its -U/-D rows (as Flink CDC
// does); a table without it is refused at start, with the statement
// that fixes it.
func init() { connectors.Register(cdcConnector{}) }

type cdcConnector struct{}

func (cdcConnector) Name() string                    { return "postgres-cdc" }
func (cdcConnector) Options() []connectors.OptionDef { return cdcOptions }

var cdcOptions = append(dbconn.ServerOptions("PostgreSQL", "5432",
	"the REPLICATION attribute and SELECT on the tables (and CREATE on the database, to create the publication)"), []connectors.OptionDef{
	{Key: "database-name", Required: true, Description: "the database"},
	{Key: "schema-name", Required: true, Description: "a regular expression matched against whole schema names"},
	{Key: "table-name", Required: true, Description: "a regular expression matched against whole table names; every matching table is read into this one table"},
	{Key: "slot.name", Required: true, Description: "the logical replication slot, created by the job; one job per slot"},
	{Key: "decoding.plugin.name", Default: "pgoutput", Description: "the logical decoding plugin; only pgoutput, which every PostgreSQL since 10 has"},
	{Key: "debezium.publication.name", Default: "dbz_publication", Description: "the publication of the captured tables, created if it does not exist (see debezium.publication.autocreate.mode)"},
	{Key: "debezium.publication.autocreate.mode", Kind: sessconfig.Enum, Enum: []string{"filtered", "all_tables", "disabled"}, Default: "filtered", Description: "Debezium's option, passed through as Flink CDC does: a missing publication is created FOR TABLE the captured tables (filtered), FOR ALL TABLES (all_tables, needs a superuser), or not at all (disabled: the publication must exist). An existing publication must hold every captured table"},
	{Key: "scan.startup.mode", Kind: sessconfig.Enum, Enum: []string{"initial", "latest-offset", "committed-offset", "snapshot"}, Default: "initial", Description: "initial (a snapshot, then the changes after it), latest-offset (only the changes from the slot's creation), committed-offset (no snapshot: an existing slot from its confirmed_flush_lsn, else a new slot as latest-offset) or snapshot (the snapshot only, a bounded source). Flink CDC's modes; specific-offset and timestamp are refused: a slot cannot go back before its confirmed position and pgoutput cannot seek by time"},
	{Key: "heartbeat.interval", Kind: sessconfig.Duration, Default: "10 s", Description: "how often the source reports its confirmed position to the server"},
	{Key: "connect.max-retries", Kind: sessconfig.Int, Min: 1, Default: "10", Description: "reconnection attempts after the replication connection is lost (a server restart), with backoff from 100 ms to 5 s, before the job fails"},
}...)

// cdcConfig is a postgres-cdc table's parsed options.
type cdcConfig struct {
	conn
	schemaRe, tableRe *regexp.Regexp
	slot, publication string
	autocreate        string // 'debezium.publication.autocreate.mode'
	mode              string // 'scan.startup.mode'
	initial           bool   // the mode takes a snapshot: initial or snapshot
	heartbeat         time.Duration
	maxRetries        int
}

var identRe = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

func parseCDCConfig(t *connectors.Table) (*cdcConfig, error) {
	if err := dbconn.CheckColumnTypes(t, "PostgreSQL"); err != nil {
		return nil, err
	}
	o := t.Options
	switch m := strings.ToLower(o["scan.startup.mode"]); m {
	case "specific-offset", "timestamp":
		return nil, fmt.Errorf("option 'scan.startup.mode' = '%s' is not supported by postgres-cdc (Flink CDC's postgres-cdc has initial, latest-offset, committed-offset and snapshot): "+
			"a replication slot cannot be moved back before its confirmed position, and pgoutput has no seek by time or LSN; "+
			"use 'committed-offset' to resume an existing slot from where it was confirmed", m)
	}
	if err := connectors.CheckOptions(cdcConnector{}, o); err != nil {
		return nil, err
	}
	c := &cdcConfig{slot: o["slot.name"], publication: connectors.Option(o, "debezium.publication.name", "dbz_publication")}
	c.host, c.port, c.database = o["hostname"], connectors.Option(o, "port", "5432"), o["database-name"]
	c.user, c.password = o["username"], o["password"]
	c.params = map[string]string{}
	if err := dbconn.NameRegexps(o, []string{"schema-name", "table-name"}, &c.schemaRe, &c.tableRe); err != nil {
		return nil, err
	}
	// Slot and publication names go into replication commands unquoted.
	if !identRe.MatchString(c.slot) || len(c.slot) > 63 {
		return nil, fmt.Errorf("option 'slot.name' must be lower-case letters, digits and underscores (at most 63), got '%s'", c.slot)
	}
	if !identRe.MatchString(c.publication) {
		return nil, fmt.Errorf("option 'debezium.publication.name' must be lower-case letters, digits and underscores, got '%s'", c.publication)
	}
	if p := connectors.Option(o, "decoding.plugin.name", "pgoutput"); p != "pgoutput" {
		return nil, fmt.Errorf("option 'decoding.plugin.name': only 'pgoutput' is supported, got '%s'", p)
	}
	c.mode = strings.ToLower(connectors.Option(o, "scan.startup.mode", "initial"))
	c.autocreate = strings.ToLower(connectors.Option(o, "debezium.publication.autocreate.mode", "filtered"))
	c.initial = c.mode == "initial" || c.mode == "snapshot"
	var err error
	if c.heartbeat, err = connectors.Duration(o, "heartbeat.interval", 10*time.Second); err != nil {
		return nil, err
	}
	if c.heartbeat < 100*time.Millisecond {
		return nil, fmt.Errorf("option 'heartbeat.interval' must be at least 100 ms, got '%s'", o["heartbeat.interval"])
	}
	if c.maxRetries, err = connectors.Int(o, "connect.max-retries", 10, 1); err != nil {
		return nil, err
	}
	if c.user == "" {
		return nil, errors.New("option 'username' is empty")
	}
	return c, nil
}

// NewScan validates the options; the server is checked when the job
// starts.
func (cdcConnector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	cfg, err := parseCDCConfig(t)
	if err != nil {
		return nil, err
	}
	return &cdcScan{cfg: cfg, t: t}, nil
}

type cdcScan struct {
	cfg *cdcConfig
	t   *connectors.Table
}

// ChangelogMode: with REPLICA IDENTITY FULL the WAL has the row before
// and after an update, so the source emits a full changelog.
func (s *cdcScan) ChangelogMode() dyntable.ChangelogMode { return dyntable.Retract }

// Parallelism is 1: a slot is one ordered stream.
func (s *cdcScan) Parallelism() int { return 1 }

// Bounded: only the 'snapshot' startup mode ends.
func (s *cdcScan) Bounded() bool { return s.cfg.mode == "snapshot" }

func (s *cdcScan) Create(int, int) (dataflow.Source, error) {
	return &cdcSource{cfg: s.cfg, t: s.t, ckpts: map[int64]uint64{}}, nil
}

// qualifiedList is `"s"."t", ...` for a publication.
func qualifiedList(ts []*capturedTable) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = qualifiedName(t.schema, t.name)
	}
	return strings.Join(q, ", ")
}
