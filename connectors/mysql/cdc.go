package mysql

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	sessconfig "github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// 'connector' = 'mysql-cdc' reads tables as changelogs, with Flink CDC's
// option names: a snapshot of the matching tables, then their binlog
// from the snapshot's exact position (cdc_source.go, cdc_binlog.go).
//
// The snapshot is chunked by default (cdc_chunked.go, Flink CDC 2.x's
// lock-free algorithm): for captured tables with one-column integer
// primary keys, chunks of rows are read in key order between the binlog's
// transactions and reconciled with the binlog up to a high watermark
// after each, and checkpoints complete during it.
//
// Otherwise ('scan.incremental.snapshot.enabled' = 'false', or a table
// with another key) the snapshot is one transaction, START
// TRANSACTION WITH CONSISTENT SNAPSHOT, whose binlog position the server
// reports with it (MariaDB's binlog_snapshot_file /
// binlog_snapshot_position; on MySQL, which has no such status, a brief
// FLUSH TABLES WITH READ LOCK pins the position while the transaction
// starts). Every change committed before that position is in the
// snapshot and every later one is in the binlog after it. The price: one
// long transaction, and checkpoints declined until the snapshot has been
// emitted (as Flink CDC 1.x did), so a failure during it starts it over.
//
// Positions are the binlog file and offset, plus the GTID set up to them
// on a server with GTIDs (MariaDB, or MySQL with gtid_mode = ON), from
// which a restore resumes (cdc_source.go, binlogPos).
func init() { connectors.Register(cdcConnector{}) }

type cdcConnector struct{}

func (cdcConnector) Name() string                    { return "mysql-cdc" }
func (cdcConnector) Options() []connectors.OptionDef { return cdcOptions }

var cdcOptions = append(dbconn.ServerOptions("MySQL or MariaDB", "3306",
	"SELECT, REPLICATION SLAVE and REPLICATION CLIENT (and RELOAD on MySQL, for the snapshot's brief read lock)"), []connectors.OptionDef{
	{Key: "database-name", Required: true, Description: "a regular expression matched against whole database names"},
	{Key: "table-name", Required: true, Description: "a regular expression matched against whole table names; every matching table of a matching database is read into this one table (sharded tables)"},
	{Key: "server-id", Description: "the replica id the binlog reader uses, unique among the server's replicas ('5400' or a range '5400-5404', whose first id is used). Default: a random id in 5400-6400"},
	{Key: "scan.startup.mode", Kind: sessconfig.Enum, Enum: []string{"initial", "latest-offset", "specific-offset", "timestamp"}, Default: "initial", Description: "initial (a snapshot, then the binlog), latest-offset (the binlog from its end), specific-offset (the binlog from scan.startup.specific-offset.gtid-set, or .file and .pos), timestamp (the binlog's changes committed at or after scan.startup.timestamp-millis)"},
	{Key: "scan.startup.specific-offset.file", Description: "the binlog file to start from, for scan.startup.mode = specific-offset"},
	{Key: "scan.startup.specific-offset.pos", Kind: sessconfig.Int, Description: "the position in that file, for scan.startup.mode = specific-offset"},
	{Key: "scan.startup.specific-offset.gtid-set", Description: "the GTID set to start after, for scan.startup.mode = specific-offset: MySQL's executed set ('uuid:1-19') or MariaDB's position ('0-1-42'); it takes precedence over .file and .pos"},
	{Key: "scan.startup.timestamp-millis", Kind: sessconfig.Int, Description: "milliseconds since the epoch, for scan.startup.mode = timestamp; the binlog is read from its oldest file and earlier changes are skipped"},
	{Key: "scan.incremental.snapshot.enabled", Kind: sessconfig.Bool, Default: "true", Description: "initial mode reads the snapshot in chunks by primary key, without a lock or a long transaction, reconciled with the binlog read along (Flink CDC 2.x's algorithm), and checkpoints complete during it; for captured tables whose primary keys are one integer column. Otherwise, or with 'false', the snapshot is one consistent transaction (checkpoints declined until it is emitted)"},
	{Key: "scan.incremental.snapshot.chunk.size", Kind: sessconfig.Int, Min: 1, Default: "8096", Description: "rows per chunk of the chunked snapshot"},
	{Key: "heartbeat.interval", Kind: sessconfig.Duration, Default: "30 s", Description: "how often the server sends a heartbeat on an idle binlog connection; a connection silent for three intervals is reconnected"},
	{Key: "connect.timeout", Kind: sessconfig.Duration, Default: "30 s", Description: "the timeout of one connection attempt"},
	{Key: "connect.max-retries", Kind: sessconfig.Int, Min: 1, Default: "10", Description: "reconnection attempts after the binlog connection is lost (a server restart), with backoff from 100 ms to 5 s, before the job fails"},
}...)

// startupMode is 'scan.startup.mode'.
type startupMode string

const (
	startInitial   startupMode = "initial"
	startLatest    startupMode = "latest-offset"
	startSpecific  startupMode = "specific-offset"
	startTimestamp startupMode = "timestamp"
)

// cdcConfig is a mysql-cdc table's parsed options. The embedded config
// holds the password and the query connection's DSN (database unset:
// every name is qualified).
type cdcConfig struct {
	*config
	host      string
	port      uint16
	dbRe      *regexp.Regexp
	tableRe   *regexp.Regexp
	serverID  uint32
	mode      startupMode
	startFile string
	startPos  uint32
	startGTID string
	startTS   int64 // milliseconds
	chunked   bool  // 'scan.incremental.snapshot.enabled'
	chunkSize int
	heartbeat time.Duration
}

func parseCDCConfig(t *connectors.Table) (*cdcConfig, error) {
	if err := dbconn.CheckColumnTypes(t, "MySQL"); err != nil {
		return nil, err
	}
	o := t.Options
	if err := connectors.CheckOptions(cdcConnector{}, o); err != nil {
		return nil, err
	}
	c := &cdcConfig{host: o["hostname"], mode: startupMode(strings.ToLower(connectors.Option(o, "scan.startup.mode", "initial")))}
	port, err := strconv.ParseUint(connectors.Option(o, "port", "3306"), 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("option 'port' must be a port number, got '%s'", o["port"])
	}
	c.port = uint16(port)
	if err := dbconn.NameRegexps(o, []string{"database-name", "table-name"}, &c.dbRe, &c.tableRe); err != nil {
		return nil, err
	}
	if v, ok := o["server-id"]; ok {
		first, _, _ := strings.Cut(v, "-")
		id, err := strconv.ParseUint(strings.TrimSpace(first), 10, 32)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("option 'server-id' must be a positive integer or a range 'a-b', got '%s'", v)
		}
		c.serverID = uint32(id)
	} else {
		n, _ := rand.Int(rand.Reader, big.NewInt(1001))
		c.serverID = 5400 + uint32(n.Int64())
	}
	switch c.mode {
	case startInitial, startLatest:
	case startSpecific:
		c.startFile = o["scan.startup.specific-offset.file"]
		c.startGTID = strings.TrimSpace(o["scan.startup.specific-offset.gtid-set"])
		p, err := strconv.ParseUint(o["scan.startup.specific-offset.pos"], 10, 32)
		if c.startGTID == "" && (c.startFile == "" || err != nil) {
			return nil, errors.New("scan.startup.mode = 'specific-offset' needs 'scan.startup.specific-offset.gtid-set', or 'scan.startup.specific-offset.file' and a numeric 'scan.startup.specific-offset.pos'")
		}
		if c.startGTID != "" {
			_, merr := gmysql.ParseMysqlGTIDSet(c.startGTID)
			_, perr := gmysql.ParseMariadbGTIDSet(c.startGTID)
			if merr != nil && perr != nil {
				return nil, fmt.Errorf("option 'scan.startup.specific-offset.gtid-set': '%s' is neither a MySQL GTID set ('uuid:1-19') nor a MariaDB GTID position ('0-1-42')", c.startGTID)
			}
		}
		c.startPos = uint32(p)
	case startTimestamp:
		ts, err := strconv.ParseInt(o["scan.startup.timestamp-millis"], 10, 64)
		if err != nil {
			return nil, errors.New("scan.startup.mode = 'timestamp' needs 'scan.startup.timestamp-millis' (milliseconds since the epoch)")
		}
		c.startTS = ts
	default:
		return nil, fmt.Errorf("option 'scan.startup.mode' must be initial, latest-offset, specific-offset or timestamp, got '%s'", c.mode)
	}
	if c.chunked, err = connectors.Bool(o, "scan.incremental.snapshot.enabled", true); err != nil {
		return nil, err
	}
	if c.chunkSize, err = connectors.Int(o, "scan.incremental.snapshot.chunk.size", 8096, 1); err != nil {
		return nil, err
	}
	if c.heartbeat, err = connectors.Duration(o, "heartbeat.interval", 30*time.Second); err != nil {
		return nil, err
	}
	if c.heartbeat < time.Second {
		return nil, fmt.Errorf("option 'heartbeat.interval' must be at least 1 s, got '%s'", o["heartbeat.interval"])
	}
	timeout, err := connectors.Duration(o, "connect.timeout", 30*time.Second)
	if err != nil {
		return nil, err
	}
	retries, err := connectors.Int(o, "connect.max-retries", 10, 1)
	if err != nil {
		return nil, err
	}
	dsn := gomysql.NewConfig()
	dsn.Net = "tcp"
	dsn.Addr = net.JoinHostPort(c.host, strconv.Itoa(int(c.port)))
	dsn.User = o["username"]
	dsn.Passwd = o["password"]
	dsn.ParseTime = true
	dsn.Loc = time.UTC
	dsn.Timeout = timeout
	dsn.InterpolateParams = true
	// TIMESTAMP columns are read in UTC, as the binlog holds them.
	dsn.Params = map[string]string{"time_zone": "'+00:00'"}
	c.config = &config{dsn: dsn, password: dsn.Passwd, maxRetries: retries, table: o["table-name"]}
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

// ChangelogMode: the binlog has the row before and after an update, so
// the source emits a full changelog (+I, -U, +U, -D), as Flink CDC does.
func (s *cdcScan) ChangelogMode() dyntable.ChangelogMode { return dyntable.Retract }

// Parallelism is 1: the binlog is one ordered stream.
func (s *cdcScan) Parallelism() int { return 1 }
func (s *cdcScan) Bounded() bool    { return false }

func (s *cdcScan) Create(int, int) (dataflow.Source, error) {
	return &cdcSource{cfg: s.cfg, t: s.t}, nil
}
