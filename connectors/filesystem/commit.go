package filesystem

// Partition commit, Flink's 'sink.partition-commit.*' options for a
// PARTITIONED BY table. A partition folder is committed once its rows
// are committed (their checkpoint completed) and its trigger holds:
//
//   - 'process-time' (the default): the folder's first row was written at
//     least 'sink.partition-commit.delay' ago (wall clock);
//   - 'partition-time': the partition's time, extracted from its values
//     with 'partition.time-extractor.timestamp-pattern' (default: the
//     first partition column's value), plus the delay is below the
//     watermark the sink had seen when the checkpoint's barrier came, so
//     that every row of the partition is in that checkpoint or an
//     earlier one.
//
// At the end of a bounded input every partition written is committed.
// Committing runs the 'success-file' policy: an empty file
// 'sink.partition-commit.success-file.name' (_SUCCESS) in the folder,
// written again when later rows reach a committed partition. The
// partitions waiting for their trigger, and when each was first written,
// are in the checkpoint (the handler's twophase.Extras), as Flink keeps
// them: after a restart they commit when their trigger holds, with the
// process-time delay counted from the first write before the failure.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// commitPolicy is a sink's partition-commit configuration; nil when the
// table has no success-file policy.
type commitPolicy struct {
	successFile   string
	partitionTime bool // trigger 'partition-time', else 'process-time'
	delay         time.Duration
	pattern       string // "$dt $hm:00"
}

// parseCommitPolicy reads the partition-commit and rolling-policy
// options. The rolling-policy ones are validated and have no effect: a
// part file is rolled at every checkpoint (Flink rolls row-format files
// at every checkpoint too, and in between by size and time).
func parseCommitPolicy(t *connectors.Table) (*commitPolicy, error) {
	o := t.Options
	for _, k := range []string{"sink.rolling-policy.rollover-interval", "sink.rolling-policy.check-interval", "sink.rolling-policy.inactivity-interval"} {
		if _, err := connectors.Duration(o, k, 0); err != nil {
			return nil, err
		}
	}
	if v, ok := o["sink.rolling-policy.file-size"]; ok {
		if _, err := config.ParseMemorySize(v); err != nil {
			return nil, fmt.Errorf("option 'sink.rolling-policy.file-size': %v", err)
		}
	}
	p := &commitPolicy{successFile: connectors.Option(o, "sink.partition-commit.success-file.name", "_SUCCESS")}
	if strings.ContainsAny(p.successFile, `/\`) || p.successFile == "." || p.successFile == ".." || p.successFile == "" {
		return nil, fmt.Errorf("option 'sink.partition-commit.success-file.name' must be a file name, got '%s'", p.successFile)
	}
	switch v := strings.ToLower(connectors.Option(o, "sink.partition-commit.trigger", "process-time")); v {
	case "process-time":
	case "partition-time":
		p.partitionTime = true
	default:
		return nil, fmt.Errorf("option 'sink.partition-commit.trigger' must be 'process-time' or 'partition-time', got '%s'", o["sink.partition-commit.trigger"])
	}
	var err error
	if p.delay, err = connectors.Duration(o, "sink.partition-commit.delay", 0); err != nil {
		return nil, err
	}
	kinds, hasKind := o["sink.partition-commit.policy.kind"]
	success := false
	for _, k := range strings.Split(kinds, ",") {
		switch k = strings.ToLower(strings.TrimSpace(k)); k {
		case "success-file":
			success = true
		case "":
		case "metastore":
			return nil, fmt.Errorf("option 'sink.partition-commit.policy.kind': 'metastore' is not supported: streamsql has no metastore (Hive catalog); use 'success-file'")
		case "custom":
			return nil, fmt.Errorf("option 'sink.partition-commit.policy.kind': 'custom' is not supported: it names a Java class ('sink.partition-commit.policy.class'); use 'success-file'")
		default:
			return nil, fmt.Errorf("option 'sink.partition-commit.policy.kind' takes 'success-file', got '%s'", k)
		}
	}
	if hasKind && len(t.PartitionKeys) == 0 {
		return nil, fmt.Errorf("option 'sink.partition-commit.policy.kind' needs a PARTITIONED BY table: partitions are what it commits")
	}
	p.pattern = o["partition.time-extractor.timestamp-pattern"]
	if p.pattern == "" && len(t.PartitionKeys) > 0 {
		p.pattern = "$" + t.Columns[t.PartitionKeys[0]].Name
	}
	if !success {
		return nil, nil
	}
	return p, nil
}

// timeOf extracts the time of partition folder dir
// ("dt=2024-01-01/hm=10%3A05") with the pattern, in ms since the epoch
// (the partition's values are wall-clock time in UTC, as the watermark).
func (p *commitPolicy) timeOf(dir string) (int64, error) {
	vals := map[string]string{}
	for _, seg := range strings.Split(dir, "/") {
		k, v, _ := strings.Cut(seg, "=")
		uk, err1 := url.PathUnescape(k)
		uv, err2 := url.PathUnescape(v)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("partition folder '%s' is not escaped as Hive's", dir)
		}
		vals[uk] = uv
	}
	s := p.pattern
	// Each $name (letters, digits, '_') is replaced by that column's value.
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			break
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		name := s[i+1 : j]
		v, ok := vals[name]
		if !ok {
			for k, kv := range vals {
				if strings.EqualFold(k, name) {
					v, ok = kv, true
				}
			}
		}
		if !ok {
			return 0, fmt.Errorf("option 'partition.time-extractor.timestamp-pattern' ('%s') names $%s, which is not a partition column", p.pattern, name)
		}
		s = s[:i] + v + s[j:]
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if ts, err := time.Parse(layout, s); err == nil {
			return ts.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("partition '%s': time '%s' (from the pattern '%s') is not 'yyyy-MM-dd HH:mm:ss' or 'yyyy-MM-dd'", dir, s, p.pattern)
}

// pendingPartition is a partition whose rows are committed and whose
// trigger has not held yet.
type pendingPartition struct {
	created time.Time // when this subtask first wrote to it
}

// noteWritten records that the open transaction wrote to folder dir.
func (h *fileHandler) noteWritten(dir string) {
	if _, ok := h.created[dir]; !ok {
		h.created[dir] = time.Now()
	}
}

// commitPartitions runs after a transaction's part files are committed:
// its folders become pending, and every pending folder whose trigger
// holds (wm is the watermark at the transaction's pre-commit) is
// committed. end commits them all.
func (h *fileHandler) commitPartitions(dirs []string, wm int64, end bool) error {
	p := h.s.commit
	if p == nil {
		return nil
	}
	for _, d := range dirs {
		if _, ok := h.pending[d]; !ok {
			c, ok := h.created[d]
			if !ok {
				c = time.Now() // restored: written before the restart
			}
			h.pending[d] = pendingPartition{created: c}
		}
		delete(h.created, d)
	}
	for d, pp := range h.pending {
		ready := end
		if !ready && p.partitionTime {
			ts, err := p.timeOf(d)
			if err != nil {
				return err
			}
			ready = wm != math.MinInt64 && ts+p.delay.Milliseconds() < wm
		} else if !ready {
			ready = time.Since(pp.created) >= p.delay
		}
		if !ready {
			continue
		}
		full := filepath.Join(h.s.dir, filepath.FromSlash(d))
		f, err := os.Create(filepath.Join(full, p.successFile))
		if err != nil {
			return fmt.Errorf("committing partition %s: %w", d, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := fsutil.SyncDir(full); err != nil {
			return err
		}
		delete(h.pending, d)
	}
	return nil
}

// partitionRecord is what the checkpoint keeps of the partitions not yet
// committed: each folder with the wall-clock time (ms since the epoch)
// this subtask first wrote to it. Pending are committed-but-waiting
// folders; Written are those of transactions pre-committed and not yet
// committed (their handles are in the checkpoint too).
type partitionRecord struct {
	Pending map[string]int64 `json:"pending,omitempty"`
	Written map[string]int64 `json:"written,omitempty"`
}

// Extra implements twophase.Extras: it is called right after PreCommit,
// when no transaction is open, so created holds only folders of
// pre-committed transactions.
func (h *fileHandler) Extra() []byte {
	if h.s.commit == nil || len(h.pending)+len(h.created) == 0 {
		return nil
	}
	r := partitionRecord{Pending: map[string]int64{}, Written: map[string]int64{}}
	for d, pp := range h.pending {
		r.Pending[d] = pp.created.UnixMilli()
	}
	for d, c := range h.created {
		r.Written[d] = c.UnixMilli()
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("filesystem: encoding the partition record: %v", err)) // maps of strings and ints always encode
	}
	return b
}

// restorePartitions takes a former subtask's partition record back (from
// RecoverAndAbort, after its handles were committed again): its waiting
// folders are pending once more, and each folder keeps the earliest first
// write known.
func (h *fileHandler) restorePartitions(extra []byte) error {
	if len(extra) == 0 || h.s.commit == nil {
		return nil
	}
	var r partitionRecord
	if err := json.Unmarshal(extra, &r); err != nil {
		return twophase.Permanent(fmt.Errorf("corrupt partition record %q in the checkpoint: %w", extra, err))
	}
	for _, m := range []map[string]int64{r.Pending, r.Written} {
		for d, ms := range m {
			if strings.Contains(d, "..") || filepath.IsAbs(d) {
				return twophase.Permanent(fmt.Errorf("partition record names a folder outside the sink directory: %q", d))
			}
			c := time.UnixMilli(ms)
			// A written folder's handle was committed just before, which
			// made it pending with the restart's time; either way it
			// waits again, from its first write.
			if pp, ok := h.pending[d]; !ok || c.Before(pp.created) {
				h.pending[d] = pendingPartition{created: c}
			}
		}
	}
	return nil
}
