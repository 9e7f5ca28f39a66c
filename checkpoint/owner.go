package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// Owner epochs fence the checkpoint store of a task whose owner can
// change while the former owner still runs (package cluster: a worker
// the group dropped during a long pause goes on until it notices). Each
// run of the task claims the next epoch, e, by creating owners/<e>
// atomically (Store.Create: link(2), or S3's If-None-Match), so no two
// runs ever share an epoch, and writes its checkpoints into its own
// folder:
//
//	owners/<e>          {"epoch":e,"base":{"epoch":b,"id":n}}, created once
//	e-<e>/chk-<n>/...   the checkpoints of epoch e
//	e-<e>/work/         a local store's working state
//
// The record names the run's base: the checkpoint it restores from,
// chosen after the claim from the history of the epoch before it. The
// history of epoch e is its own checkpoints, then those of its base's
// epoch up to the base, then that epoch's base's, and so on: a former
// owner's checkpoints written after the next owner chose its base are
// not in it, whatever their number.
//
// A run never deletes or overwrites another epoch's files, and its
// checkpoints never refer to them (a bucket store shares files only
// within one folder). After writing a checkpoint's metadata, and before
// its sinks commit or anything is pruned, the run lists owners/: if a
// newer epoch exists it is fenced, commits nothing, prunes nothing, and
// stops with ErrFenced. Whichever way the race between the two goes,
// what was committed is in the new owner's history:
//
//   - the check passes before the new owner claims: the new owner lists
//     after its claim, sees the checkpoint, and bases on it (or on a
//     newer one);
//   - the new owner claims first: the old one sees it and commits
//     nothing of that checkpoint; the new owner's base may or may not
//     include it, and either is consistent.
//
// The current owner removes older epochs' folders once a checkpoint of
// its own has passed the check: no newer owner can then base on them.

// ErrFenced is returned when a newer owner has claimed the task: this
// run is a stale one, and stops without committing.
var ErrFenced = errors.New("checkpoint: fenced: a newer owner runs this task")

// ownersDir is the folder of the owner records.
const ownersDir = "owners"

// ckptRef names one checkpoint in an owned store: its owner epoch (0 for
// the store's root, written before epochs) and its id.
type ckptRef struct {
	Epoch int64 `json:"epoch"`
	ID    int64 `json:"id"`
}

// ownerRecord is the contents of owners/<epoch>.
type ownerRecord struct {
	Epoch int64 `json:"epoch"`
	// Base is what the run restores from; nil for a start from scratch.
	Base  *ckptRef  `json:"base,omitempty"`
	Owner string    `json:"owner,omitempty"`
	Time  time.Time `json:"time"`
}

// epochDir is the folder of epoch e's checkpoints ("" for epoch 0).
func epochDir(e int64) string {
	if e == 0 {
		return ""
	}
	return "e-" + strconv.FormatInt(e, 10)
}

// refRel is the checkpoint's rel in the store.
func (r ckptRef) rel() string {
	if r.Epoch == 0 {
		return chkRel(r.ID)
	}
	return epochDir(r.Epoch) + "/" + chkRel(r.ID)
}

// epochs lists the claimed epochs, newest first.
func epochs(ctx context.Context, st Store) ([]int64, error) {
	names, err := st.Names(ctx, ownersDir)
	if err != nil {
		return nil, err
	}
	var es []int64
	for _, n := range names {
		if e, err := strconv.ParseInt(n, 10, 64); err == nil && e > 0 {
			es = append(es, e)
		}
	}
	sortDesc(es)
	return es, nil
}

func sortDesc(xs []int64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] > xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func readOwner(ctx context.Context, st Store, e int64) (*ownerRecord, error) {
	data, err := st.ReadFile(ctx, ownersDir+"/"+strconv.FormatInt(e, 10))
	if err != nil {
		return nil, err
	}
	var r ownerRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Epoch != e {
		return nil, fmt.Errorf("checkpoint: %s: the record of owner epoch %d is damaged", st, e)
	}
	return &r, nil
}

// history calls try with the checkpoints of epoch top's history, newest
// first (see above), until try returns true or an error. top 0 is the
// store's root, the layout before epochs.
func history(ctx context.Context, st Store, top int64, try func(ckptRef) (bool, error)) error {
	return walk(ctx, st, top, -1, try)
}

// historyFrom is history from checkpoint r on: r, then the older ones.
func historyFrom(ctx context.Context, st Store, r ckptRef, try func(ckptRef) (bool, error)) error {
	return walk(ctx, st, r.Epoch, r.ID, try)
}

// walk is history from epoch e's checkpoints numbered up to limit (-1:
// all of them).
func walk(ctx context.Context, st Store, e, limit int64, try func(ckptRef) (bool, error)) error {
	for seen := 0; ; seen++ {
		if seen > 1<<16 {
			return fmt.Errorf("checkpoint: %s: the owner records form a loop", st)
		}
		ids, err := st.List(ctx, epochDir(e))
		if err != nil {
			return err
		}
		for _, id := range ids {
			if limit >= 0 && id > limit {
				continue // written by a stale owner after the next chose its base
			}
			if ok, err := try(ckptRef{Epoch: e, ID: id}); ok || err != nil {
				return err
			}
		}
		if e == 0 {
			return nil
		}
		r, err := readOwner(ctx, st, e)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // pruned: nothing older is kept
		}
		if err != nil {
			return err
		}
		if r.Base == nil || r.Base.Epoch >= e {
			return nil
		}
		e, limit = r.Base.Epoch, r.Base.ID
	}
}

// newestComplete is the newest checkpoint of epoch top's history whose
// metadata reads back, or nil.
func newestComplete(ctx context.Context, st Store, top int64) (*ckptRef, error) {
	var found *ckptRef
	err := history(ctx, st, top, func(r ckptRef) (bool, error) {
		if _, err := st.Read(ctx, r.rel()); err != nil {
			return false, nil
		}
		found = &r
		return true, nil
	})
	return found, err
}

// claim claims the next owner epoch of the store and chooses its base:
// the newest complete checkpoint of the history of the epoch before it,
// listed after the claim (and checked again: a former owner whose fence
// check passed just before the claim may have completed a newer one
// meanwhile, in which case the claim is given up for the next epoch).
func claim(ctx context.Context, st Store, owner string) (int64, *ckptRef, error) {
	for attempt := 0; attempt < 100; attempt++ {
		es, err := epochs(ctx, st)
		if err != nil {
			return 0, nil, fmt.Errorf("checkpoint: %s: listing owners: %w", st, err)
		}
		top := int64(0)
		if len(es) > 0 {
			top = es[0]
		}
		base, err := newestComplete(ctx, st, top)
		if err != nil {
			return 0, nil, err
		}
		e := top + 1
		data, err := json.Marshal(ownerRecord{Epoch: e, Base: base, Owner: owner, Time: time.Now().UTC()})
		if err != nil {
			return 0, nil, err
		}
		ok, err := st.Create(ctx, ownersDir+"/"+strconv.FormatInt(e, 10), data)
		if err != nil {
			return 0, nil, fmt.Errorf("checkpoint: %s: claiming owner epoch %d: %w", st, e, err)
		}
		if !ok {
			continue // another run claimed e first
		}
		again, err := newestComplete(ctx, st, top)
		if err != nil {
			return 0, nil, err
		}
		if sameRef(base, again) {
			return e, base, nil
		}
	}
	return 0, nil, fmt.Errorf("checkpoint: %s: could not claim an owner epoch in 100 attempts", st)
}

func sameRef(a, b *ckptRef) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// checkOwner returns ErrFenced if an epoch newer than e was claimed.
func checkOwner(ctx context.Context, st Store, e int64) error {
	es, err := epochs(ctx, st)
	if err != nil {
		return fmt.Errorf("checkpoint: %s: listing owners: %w", st, err)
	}
	if len(es) > 0 && es[0] > e {
		return fmt.Errorf("%w (epoch %d claimed; this run is epoch %d)", ErrFenced, es[0], e)
	}
	return nil
}

// pruneEpochs removes what epochs before e left: their folders, the
// store root's checkpoints from before epochs, and their owner records.
// Only the current owner calls it, after a checkpoint of its own passed
// checkOwner: no owner can base on anything older from then on.
func pruneEpochs(ctx context.Context, st Store, e int64) error {
	names, err := st.Names(ctx, "")
	if err != nil {
		return err
	}
	for _, n := range names {
		old := false
		if rest, ok := strings.CutPrefix(n, "e-"); ok {
			k, err := strconv.ParseInt(rest, 10, 64)
			old = err == nil && k < e
		} else if rest, ok := strings.CutPrefix(n, "chk-"); ok {
			_, err := strconv.ParseInt(rest, 10, 64)
			old = err == nil
		}
		if !old {
			continue
		}
		if err := st.Remove(ctx, n, nil); err != nil {
			return err
		}
	}
	es, err := epochs(ctx, st)
	if err != nil {
		return err
	}
	for _, k := range es {
		if k < e {
			if err := st.Delete(ctx, ownersDir+"/"+strconv.FormatInt(k, 10)); err != nil {
				return err
			}
		}
	}
	return nil
}
