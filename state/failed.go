package state

// FailedStore is a store that could not be opened (its state directory
// is unusable, say). Registering a state on it returns the reason, so the
// operator's Open fails the job with it.
type FailedStore struct {
	ID  string
	Err error
}

var _ Store = (*FailedStore)(nil)

// OperatorID implements Store.
func (f *FailedStore) OperatorID() string { return f.ID }

// Backend implements Store.
func (f *FailedStore) Backend() string { return "failed" }

// Checkpoint implements Store: the reason the store could not be opened.
func (f *FailedStore) Checkpoint(string) (SnapshotInfo, error) { return SnapshotInfo{}, f.Err }

// Snapshot implements Store: the reason the store could not be opened.
func (f *FailedStore) Snapshot(string, bool) (SnapshotWrite, error) { return nil, f.Err }

// Close implements Store.
func (f *FailedStore) Close() error { return nil }

func (f *FailedStore) register(string) error { return f.Err }
