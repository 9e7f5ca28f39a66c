// Package fsutil holds the durable file writes that checkpoints rely on:
// a file is written and fsynced, renamed into place, and its directory
// fsynced, so that a crash leaves either the old content or the new one,
// never a torn file. The checkpoint metadata, the Pebble checkpoint
// manifests and the filesystem sink's commits all go through it.
package fsutil

import (
	"os"
	"path/filepath"
)

// WriteFileSync creates path (which must not exist), writes data and
// fsyncs it.
func WriteFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteFileAtomic replaces path with data durably: it writes path+".tmp"
// (removing a leftover of an earlier crash first), fsyncs it, renames it
// over path and fsyncs the directory.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := WriteFileSync(tmp, data); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, so that files created, renamed or removed
// in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
