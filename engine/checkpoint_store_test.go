package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/s3test"
	"github.com/streamsql/streamsql/parser"
)

// bucketKind is a checkpoint store given to state.checkpoints.dir as a
// URL, with a view of the objects it holds.
type bucketKind struct {
	name string
	open func(t *testing.T) (root string, b bucketView)
}

// bucketView reads the store the way a test checks it, independently
// of the checkpoint package: file names and contents.
type bucketView interface {
	keys(t *testing.T, prefix string) []string
	read(t *testing.T, key string) []byte
	remove(t *testing.T, key string)
	write(t *testing.T, key string, data []byte)
}

type dirView string

func (d dirView) keys(t *testing.T, prefix string) []string {
	var out []string
	_ = filepath.WalkDir(string(d), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			rel, _ := filepath.Rel(string(d), p)
			if strings.HasPrefix(filepath.ToSlash(rel), prefix) {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	return out
}

func (d dirView) read(t *testing.T, key string) []byte {
	b, err := os.ReadFile(filepath.Join(string(d), key))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (d dirView) remove(t *testing.T, key string) {
	if err := os.Remove(filepath.Join(string(d), key)); err != nil {
		t.Fatal(err)
	}
}

func (d dirView) write(t *testing.T, key string, data []byte) {
	if err := os.WriteFile(filepath.Join(string(d), key), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

type s3View struct {
	s      *s3test.Server
	prefix string
}

func (v s3View) keys(t *testing.T, prefix string) []string {
	var out []string
	for _, k := range v.s.Keys(t, v.prefix+prefix) {
		out = append(out, strings.TrimPrefix(k, v.prefix))
	}
	return out
}

func (v s3View) read(t *testing.T, key string) []byte {
	obj, err := v.s.Backend.GetObject(v.s.Bucket, v.prefix+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (v s3View) remove(t *testing.T, key string) {
	if _, err := v.s.Backend.DeleteObject(v.s.Bucket, v.prefix+key); err != nil {
		t.Fatal(err)
	}
}

func (v s3View) write(t *testing.T, key string, data []byte) {
	if _, err := v.s.Backend.PutObject(v.s.Bucket, v.prefix+key, map[string]string{}, strings.NewReader(string(data)), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

var bucketKinds = []bucketKind{
	{"file", func(t *testing.T) (string, bucketView) {
		dir := t.TempDir()
		return "file://" + dir, dirView(dir)
	}},
	{"s3", func(t *testing.T) (string, bucketView) {
		s := s3test.Start(t, "checkpoints")
		return s.Location("jobs"), s3View{s, "jobs/"}
	}},
}

// completedIDs lists the checkpoints of the job ckpt-test whose
// metadata is in the store, newest first.
func completedIDs(t *testing.T, b bucketView) []int64 {
	var ids []int64
	for _, k := range b.keys(t, "ckpt-test/") {
		var id int64
		if _, err := fmt.Sscanf(k, "ckpt-test/chk-%d/_metadata", &id); err == nil && strings.HasSuffix(k, "/_metadata") {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	slices.Reverse(ids)
	return ids
}

// TestBucketStoreRestoreAfterCrash is TestRestoreAfterCrashEqualsUninterruptedRun
// with the checkpoints in a bucket: the second run finds them in the
// store alone (its local directory is new) and the result is exact.
func TestBucketStoreRestoreAfterCrash(t *testing.T) {
	const rows = 30000
	for _, k := range bucketKinds {
		t.Run(k.name, func(t *testing.T) {
			root, b := k.open(t)
			_, j1, out1 := startCkptJob(t, root, 2, 10000, rows)
			waitFor(t, "a quarter of the rows", func() bool { in, _ := j1.Records(); return in >= rows/4 })
			before := j1.coord.Stats().Completed
			waitFor(t, "two checkpoints mid-way", func() bool { return j1.coord.Stats().Completed > before+1 })
			j1.Cancel()
			_ = j1.Wait()
			ids := completedIDs(t, b)
			if len(ids) < 2 {
				t.Fatalf("the store holds the metadata of checkpoints %v, want at least 2", ids)
			}
			// Incremental: the newest checkpoint refers to at least one
			// file an earlier one uploaded instead of uploading it again.
			if shared := sharedFiles(t, b.read(t, fmt.Sprintf("ckpt-test/chk-%d/_metadata", ids[0]))); shared == 0 {
				t.Errorf("checkpoint %d shares no file with an earlier one", ids[0])
			}
			_, j2, out2 := startCkptJob(t, root, 2, 0, rows)
			if err := j2.Wait(); err != nil {
				t.Fatal(err)
			}
			if got, want := restoredChk(j2.coord.Stats().RestoredFrom), fmt.Sprintf("chk-%d", ids[0]); got != want {
				t.Fatalf("restored from %q, want the newest checkpoint (%s)", got, want)
			}
			if in, _ := j2.Records(); in <= 0 || in >= rows {
				t.Fatalf("the restored run read %d rows of %d", in, rows)
			}
			view := map[int64]gs{}
			applyOut(out1.String(), view)
			applyOut(out2.String(), view)
			compare(t, view, reference(rows))
			// The local copies went with the job.
			if _, err := os.Stat(j2.coord.RestoredFrom()); !os.IsNotExist(err) {
				t.Errorf("the local copy %s of the restored checkpoint is still there (%v)", j2.coord.RestoredFrom(), err)
			}
		})
	}
}

// restoredChk is the checkpoint's name in Stats.RestoredFrom, a path or
// a URL.
func restoredChk(loc string) string {
	loc, _, _ = strings.Cut(loc, "?")
	return loc[strings.LastIndexByte(loc, '/')+1:]
}

// sharedFiles counts the files of a checkpoint's metadata that live in
// another checkpoint's folder.
func sharedFiles(t *testing.T, data []byte) int {
	var env struct {
		Body checkpoint.Metadata `json:"body"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range env.Body.Subtasks {
		for _, f := range s.Files {
			if f.Object != "" {
				if !strings.HasPrefix(f.Object, "chk-") || strings.HasPrefix(f.Object, fmt.Sprintf("chk-%d/", env.Body.CheckpointID)) {
					t.Fatalf("file %s refers to %s", f.Name, f.Object)
				}
				n++
			}
		}
	}
	return n
}

// TestBucketStoreSkipsIncompleteAndCorrupt: the newest checkpoint lost
// its metadata (the process died before writing it), the one before it
// has a damaged metadata: the job restores from the third, exactly.
func TestBucketStoreSkipsIncompleteAndCorrupt(t *testing.T) {
	const rows = 30000
	for _, k := range bucketKinds {
		t.Run(k.name, func(t *testing.T) {
			root, b := k.open(t)
			_, j1, out1 := startCkptJob(t, root, 1, 20000, rows)
			waitFor(t, "three checkpoints", func() bool { return j1.coord.Stats().Completed >= 3 })
			j1.Cancel()
			_ = j1.Wait()
			ids := completedIDs(t, b)
			if len(ids) < 3 {
				t.Fatalf("want 3 retained checkpoints, have %v", ids)
			}
			b.remove(t, fmt.Sprintf("ckpt-test/chk-%d/_metadata", ids[0]))
			meta := fmt.Sprintf("ckpt-test/chk-%d/_metadata", ids[1])
			data := b.read(t, meta)
			data[len(data)/2] ^= 0x5a
			b.write(t, meta, data)
			_, j2, out2 := startCkptJob(t, root, 1, 0, rows)
			if err := j2.Wait(); err != nil {
				t.Fatal(err)
			}
			if got := restoredChk(j2.coord.Stats().RestoredFrom); got != fmt.Sprintf("chk-%d", ids[2]) {
				t.Fatalf("restored from %q, want chk-%d", got, ids[2])
			}
			view := map[int64]gs{}
			applyOut(out1.String(), view)
			applyOut(out2.String(), view)
			compare(t, view, reference(rows))
		})
	}
}

// TestBucketSavepointRescaling: a savepoint into S3, restored at other
// parallelisms from there, with the job's checkpoints in S3 too.
func TestBucketSavepointRescaling(t *testing.T) {
	const rows = 30000
	ref := reference(rows)
	s := s3test.Start(t, "savepoints")
	for i, p := range []int{1, 4} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			sp := s.Location(fmt.Sprintf("sp-%d", i))
			_, j1, out1 := startCkptJob(t, s.Location(fmt.Sprintf("run1-%d", i)), 2, 10000, rows)
			waitFor(t, "rows out of the first run", func() bool { in, _ := j1.Records(); return in > 0 })
			if err := j1.coord.Savepoint(sp); err != nil {
				t.Fatal(err)
			}
			j1.Cancel()
			_ = j1.Wait()
			keys := s.Keys(t, fmt.Sprintf("sp-%d/", i))
			if !slices.Contains(keys, fmt.Sprintf("sp-%d/_metadata", i)) || len(keys) < 3 {
				t.Fatalf("the savepoint holds %v", keys)
			}
			if err := j1.coord.Savepoint(sp); err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Fatalf("a second savepoint into the same place: %v", err)
			}
			_, j2, out2 := startCkptJob(t, s.Location(fmt.Sprintf("run2-%d", i)), p, 0, rows,
				fmt.Sprintf("SET 'execution.savepoint.path' = '%s';", sp))
			if err := j2.Wait(); err != nil {
				t.Fatal(err)
			}
			if in, _ := j2.Records(); in <= 0 || in >= rows {
				t.Fatalf("the restored run read %d rows of %d: it did not resume from the savepoint", in, rows)
			}
			view := map[int64]gs{}
			applyOut(out1.String(), view)
			applyOut(out2.String(), view)
			compare(t, view, ref)
		})
	}
}

// TestStopWithSavepointToBucket: STOP JOB ... WITH SAVEPOINT writes under
// an s3:// state.checkpoints.dir and says where, without secrets.
func TestStopWithSavepointToBucket(t *testing.T) {
	s := s3test.Start(t, "stop")
	root := s.Location("root") + "&profile=p&session_token=hunter2"
	_, j, _ := startCkptJob(t, s.Location("root"), 1, 1000, 1_000_000)
	waitFor(t, "a checkpoint", func() bool { return j.coord.Stats().Completed > 0 })
	sess := NewSession(io.Discard)
	if err := sess.Conf.Set("state.checkpoints.dir", root); err != nil {
		t.Fatal(err)
	}
	r, err := sess.stopWithSavepoint(j)
	if err == nil {
		t.Fatalf("a savepoint through an unknown profile succeeded: %s", r.Message)
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "session_token=******") {
		t.Fatalf("the error shows or hides the wrong things: %v", err)
	}
	if err := sess.Conf.Set("state.checkpoints.dir", s.Location("root")); err != nil {
		t.Fatal(err)
	}
	r, err = sess.stopWithSavepoint(j)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, k := range s.Keys(t, "root/savepoints/") {
		found = found || strings.HasSuffix(k, "/_metadata")
	}
	if !found || !strings.Contains(r.Message, "s3://stop/root/savepoints/ckpt-test-") {
		t.Fatalf("message %q; savepoint objects %v", r.Message, s.Keys(t, "root/savepoints/"))
	}
}

// TestUnwritableStoreFailsAtStart: a store that cannot be written stops
// the job before it starts, naming the store without its secrets.
func TestUnwritableStoreFailsAtStart(t *testing.T) {
	s := s3test.Start(t, "exists")
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ root, want string }{
		// want lists parts of the error, split by '|': where, and why.
		{strings.Replace(s.Location("x"), "s3://exists/", "s3://missing-bucket/", 1), "s3://missing-bucket/x/ckpt-test?|is not writable: writing a probe object|NoSuchBucket"},
		{s.Location("x") + "&sig=hunter2", "sig=******"},
		{"file://" + file + "/sub?secret_key_path=hunter2", "file://" + file + "/sub"},
		{file + "/sub", file + "/sub"},
		{"gs://bucket/x?token=hunter2", "unsupported scheme"},
	} {
		var out strings.Builder
		sess := NewSession(&out)
		sql := fmt.Sprintf(ckptJob, c.root, 1, 0, 10)
		stmts, err := parser.Parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		var last error
		for _, st := range stmts {
			if _, err := sess.Execute(context.Background(), st); err != nil {
				last = err
				break
			}
		}
		if last == nil {
			t.Fatalf("%s: the job started", c.root)
		}
		msg := last.Error()
		if strings.Contains(msg, "hunter2") || !strings.Contains(msg, "checkpoint store") {
			t.Fatalf("%s: error %q", c.root, msg)
		}
		for _, w := range strings.Split(c.want, "|") {
			if !strings.Contains(msg, w) {
				t.Fatalf("%s: error %q does not say %q", c.root, msg, w)
			}
		}
	}
}
