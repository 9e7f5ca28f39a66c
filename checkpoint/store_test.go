package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestJoinAndRedact(t *testing.T) {
	for _, c := range []struct{ loc, elem, joined, redacted string }{
		{"/var/ckpt", "job", "/var/ckpt/job", "/var/ckpt/job"},
		{"file:///var/ckpt", "job", "file:///var/ckpt/job", "file:///var/ckpt/job"},
		{"s3://bucket?region=eu-west-1", "job", "s3://bucket/job?region=eu-west-1", "s3://bucket/job?region=eu-west-1"},
		{"s3://bucket/a/b/?region=x&endpoint=http%3A%2F%2Fh%3A9000", "j", "s3://bucket/a/b/j?region=x&endpoint=http%3A%2F%2Fh%3A9000",
			"s3://bucket/a/b/j?region=x&endpoint=http%3A%2F%2Fh%3A9000"},
		{"s3://bucket/p?region=x&aws_secret_access_key=S3CR3T&session_token=T0K", "j", "s3://bucket/p/j?region=x&aws_secret_access_key=S3CR3T&session_token=T0K",
			"s3://bucket/p/j?region=x&aws_secret_access_key=******&session_token=******"},
		{"s3://user:pa55@bucket/p", "j", "s3://user:pa55@bucket/p/j", "s3://user:******@bucket/p/j"},
	} {
		j := Join(c.loc, c.elem)
		if j != c.joined {
			t.Errorf("Join(%q, %q) = %q, want %q", c.loc, c.elem, j, c.joined)
		}
		if r := Redact(j); r != c.redacted {
			t.Errorf("Redact(%q) = %q, want %q", j, r, c.redacted)
		}
	}
	msg := `open bucket "s3://b?region=x&token=T0K": unknown query parameter`
	if got := redactText(msg); strings.Contains(got, "T0K") || !strings.Contains(got, "s3://b?region=x&token=******") {
		t.Errorf("redactText: %q", got)
	}
	for loc, want := range map[string]bool{"/a/b": false, "a://b": true, "s3://b": true, "C:/x": false, "rel/dir": false, "we ird://x": false} {
		if IsURL(loc) != want {
			t.Errorf("IsURL(%q) = %v", loc, !want)
		}
	}
}

// TestBucketStoreSharesUnchangedFiles drives a file:// store by hand: a
// file identical to one of the newest committed checkpoint is not
// uploaded again, one that changed is; removing the older checkpoint
// keeps what the newer one refers to, and a new store (a new process)
// restores both from the bucket alone.
func TestBucketStoreSharesUnchangedFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := OpenStore(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Probe(ctx); err != nil {
		t.Fatal(err)
	}
	// snapshot writes a subtask's snapshot the way the state package
	// does: files, then the manifest that lists them with checksums.
	snapshot := func(rel string, files map[string]string) {
		dir := filepath.Join(st.Local(), rel, "node-1-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTestSnapshot(t, dir, files)
	}
	commit := func(rel string, id int64) *Metadata {
		files, err := st.PutState(ctx, rel, "node-1-0")
		if err != nil {
			t.Fatal(err)
		}
		m := &Metadata{Version: 1, CheckpointID: id, Subtasks: []Subtask{{Node: 1, Name: "agg", Parallelism: 1,
			KeyGroups: [2]int{0, 128}, StateDir: "node-1-0", Files: files}}}
		if err := st.Commit(ctx, rel, m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	snapshot("chk-1", map[string]string{"000001.sst": "one", "000002.sst": "two"})
	m1 := commit("chk-1", 1)
	for _, f := range m1.Subtasks[0].Files {
		if f.Object != "" {
			t.Fatalf("the first checkpoint refers to %s", f.Object)
		}
	}
	snapshot("chk-2", map[string]string{"000001.sst": "one", "000002.sst": "TWO", "000003.sst": "three"})
	m2 := commit("chk-2", 2)
	objects := map[string]string{}
	for _, f := range m2.Subtasks[0].Files {
		objects[f.Name] = f.Object
	}
	if objects["000001.sst"] != "chk-1/node-1-0/000001.sst" || objects["000002.sst"] != "" || objects["000003.sst"] != "" {
		t.Fatalf("objects of chk-2: %v", objects)
	}
	if _, err := os.Stat(filepath.Join(root, "chk-2", "node-1-0", "000001.sst")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unchanged file was uploaded again (%v)", err)
	}
	if err := st.Remove(ctx, "chk-1", []string{"chk-2"}); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(root, "chk-1", "*", "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "000001.sst" {
		t.Fatalf("after removing chk-1, its folder holds %v, want only the file chk-2 uses", left)
	}
	if _, err := os.Stat(filepath.Join(root, "chk-1", MetadataFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("chk-1 still has its metadata")
	}

	// A new process: only the bucket.
	st2, err := OpenStore(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	ids, err := st2.List(ctx, "")
	if err != nil || len(ids) != 2 || ids[0] != 2 || ids[1] != 1 {
		t.Fatalf("List = %v, %v", ids, err)
	}
	if _, err := st2.Read(ctx, "chk-1"); !errors.Is(err, errIncomplete) {
		t.Fatalf("chk-1 reads as %v, want incomplete", err)
	}
	m, err := st2.Read(ctx, "chk-2")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := st2.Fetch(ctx, "chk-2", m)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"000001.sst": "one", "000002.sst": "TWO", "000003.sst": "three"} {
		if got, err := os.ReadFile(filepath.Join(dir, "node-1-0", name)); err != nil || string(got) != want {
			t.Fatalf("fetched %s = %q, %v; want %q", name, got, err, want)
		}
	}
	// A missing object: the fetch fails, naming it.
	if err := os.Remove(filepath.Join(root, "chk-1", "node-1-0", "000001.sst")); err != nil {
		t.Fatal(err)
	}
	if _, err := st2.Fetch(ctx, "chk-2", m); err == nil || !strings.Contains(err.Error(), "chk-1/node-1-0/000001.sst") {
		t.Fatalf("fetching with a missing object: %v", err)
	}
}

// writeTestSnapshot writes files into dir and the manifest of the state
// package's snapshot format (state/pebble_restore.go) listing them.
func writeTestSnapshot(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("streamsql keygroup snapshot 1\noperator \"1\"\nkeygroups 0 128\n")
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(files[n]), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "file %s %d %016x\n", n, len(files[n]), xxhash.Sum64String(files[n]))
	}
	fmt.Fprintf(&b, "checksum %016x\n", xxhash.Sum64String(b.String()))
	if err := os.WriteFile(filepath.Join(dir, "STREAMSQL-CHECKPOINT"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLocalDirsOfDeadProcessesAreRemoved: a bucket store's local
// directory whose lock nobody holds (its process died) goes when the
// next store opens; one still held stays.
func TestLocalDirsOfDeadProcessesAreRemoved(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := filepath.Join(os.TempDir(), localDirPrefix+"dead")
	if err := os.MkdirAll(filepath.Join(dead, "chk-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	live, lock, err := newLocalDir()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	other, lock2, err := newLocalDir()
	if err != nil {
		t.Fatal(err)
	}
	defer lock2.Close()
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead process's directory is still there (%v)", err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a live store's directory went: %v", err)
		}
	}
}

// TestLocalDirsOpenedTogether: stores opening at the same time (the
// tasks of workers starting together) never take each other's new
// directories for dead ones.
func TestLocalDirsOpenedTogether(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const n = 32
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, l, err := newLocalDir()
			dirs[i], errs[i] = d, err
			if err == nil {
				t.Cleanup(func() { _ = l.Close() })
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("store %d: %v", i, errs[i])
		}
		if _, err := os.Stat(dirs[i]); err != nil {
			t.Fatalf("store %d's directory went: %v", i, err)
		}
	}
}
