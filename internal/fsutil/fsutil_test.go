package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	// A leftover temporary file of a crashed write does not block the next.
	if err := os.WriteFile(p+".tmp", []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one", "two"} {
		if err := WriteFileAtomic(p, []byte(want)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	if _, err := os.Stat(p + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left: %v", err)
	}
	if err := WriteFileSync(p, []byte("x")); err == nil {
		t.Fatal("WriteFileSync overwrote an existing file")
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}
