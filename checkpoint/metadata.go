package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/state"
)

// MetadataFile is the name of a checkpoint's metadata file; a checkpoint
// directory without it is incomplete.
const MetadataFile = "_metadata"

// Metadata describes one completed checkpoint or savepoint.
type Metadata struct {
	Version      int       `json:"version"`
	Job          string    `json:"job"`
	PlanHash     string    `json:"planHash"`
	CheckpointID int64     `json:"checkpointId"`
	Savepoint    bool      `json:"savepoint"`
	Time         time.Time `json:"time"`
	DurationMs   int64     `json:"durationMs"`
	Subtasks     []Subtask `json:"subtasks"`
}

// Subtask is one subtask's share of a checkpoint.
type Subtask struct {
	Node        int    `json:"node"`
	Name        string `json:"name"`
	Subtask     int    `json:"subtask"`
	Parallelism int    `json:"parallelism"`
	// KeyGroups is the [start, end) range of key groups the subtask owned.
	KeyGroups [2]int `json:"keyGroups"`
	// StateDir is the subtask's state, relative to the checkpoint
	// directory; empty for a subtask without keyed state.
	StateDir string `json:"stateDir,omitempty"`
	// Position is a source subtask's saved position.
	Position   []byte `json:"position,omitempty"`
	TotalBytes int64  `json:"totalBytes,omitempty"`
	NewBytes   int64  `json:"newBytes,omitempty"`
	// Files lists the state's files in a bucket store (nil in a local
	// directory, whose StateDir holds them all).
	Files []File `json:"files,omitempty"`
}

// File is one file of a subtask's state in a bucket store.
type File struct {
	Name string `json:"name"` // in the subtask's StateDir
	Size int64  `json:"size"`
	// Hash is the file's xxhash64 from the state's manifest; zero for
	// the manifest itself, which is never shared.
	Hash uint64 `json:"hash,omitempty"`
	// Object is the key, relative to the job's folder, of an identical
	// file an earlier checkpoint uploaded; empty when the file was
	// uploaded with this checkpoint, at <checkpoint>/<StateDir>/<Name>.
	Object string `json:"object,omitempty"`
}

type envelopeJSON struct {
	Checksum string          `json:"checksum"`
	Body     json.RawMessage `json:"body"`
}

// writeMetadata writes dir/_metadata atomically: a temporary file,
// fsynced, renamed into place, and the directory fsynced, so a crash
// leaves either no metadata or a whole one.
func writeMetadata(dir string, m *Metadata) error {
	data, err := encodeMetadata(m)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, MetadataFile), data)
}

// errIncomplete marks a checkpoint without metadata: it never
// completed, which is not damage.
var errIncomplete = errors.New("an incomplete checkpoint")

// ReadMetadata reads and verifies the metadata of a checkpoint or
// savepoint directory on the local file system, and checks that the
// state files it names are present.
func ReadMetadata(dir string) (*Metadata, error) {
	data, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint: %s has no %s (%w)", dir, MetadataFile, errIncomplete)
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	m, err := parseMetadata(dir, data)
	if err != nil {
		return nil, err
	}
	for _, s := range m.Subtasks {
		if s.StateDir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, s.StateDir)); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: state of %s/%d is missing: %v", dir, s.Name, s.Subtask, err)
		}
		if err := state.CheckSnapshotFiles(filepath.Join(dir, s.StateDir)); err != nil {
			return nil, fmt.Errorf("checkpoint: %s: state of %s/%d: %w", dir, s.Name, s.Subtask, err)
		}
	}
	return m, nil
}

// parseMetadata decodes and verifies the contents of a _metadata file;
// where names it in errors.
func parseMetadata(where string, data []byte) (*Metadata, error) {
	var env envelopeJSON
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: metadata is not valid JSON: %v", where, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, env.Body); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: metadata is not valid JSON: %v", where, err)
	}
	sum := sha256.Sum256(compact.Bytes())
	if hex.EncodeToString(sum[:]) != env.Checksum {
		return nil, fmt.Errorf("checkpoint: %s: metadata checksum does not match (corrupt)", where)
	}
	var m Metadata
	if err := json.Unmarshal(env.Body, &m); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %v", where, err)
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("checkpoint: %s: unknown metadata version %d", where, m.Version)
	}
	for _, s := range m.Subtasks {
		if s.StateDir == "" {
			continue
		}
		if !safeRel(s.StateDir) {
			return nil, fmt.Errorf("checkpoint: %s: state dir %q must be relative", where, s.StateDir)
		}
		for _, f := range s.Files {
			if !safeRel(f.Name) || strings.Contains(f.Name, "/") || (f.Object != "" && !safeRel(f.Object)) {
				return nil, fmt.Errorf("checkpoint: %s: state file %q (object %q) must be relative", where, f.Name, f.Object)
			}
		}
	}
	return &m, nil
}

// safeRel reports whether p is a relative path that stays inside its
// directory.
func safeRel(p string) bool {
	return p != "" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "/") && !strings.Contains(p, "..")
}

// encodeMetadata is the contents of a _metadata file: the body and its
// checksum.
func encodeMetadata(m *Metadata) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body) // over the compact form, which reading recovers
	return json.MarshalIndent(envelopeJSON{Checksum: hex.EncodeToString(sum[:]), Body: body}, "", "  ")
}

// checkpointDirs lists dir's chk-<n> directories, newest first.
func checkpointDirs(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var ids []int64
	for _, e := range ents {
		if rest, ok := strings.CutPrefix(e.Name(), "chk-"); ok && e.IsDir() {
			if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
				ids = append(ids, n)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	return ids, nil
}

func chkDir(dir string, id int64) string { return filepath.Join(dir, fmt.Sprintf("chk-%d", id)) }
