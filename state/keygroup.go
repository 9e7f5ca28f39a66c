package state

import "github.com/cespare/xxhash/v2"

// MaxParallelism is the number of key groups, Flink's
// pipeline.max-parallelism. Every key belongs to one key group, and each
// operator subtask owns a contiguous range of key groups; a snapshot
// taken at one parallelism can be restored at another by re-splitting
// the ranges.
const MaxParallelism = 128

// KeyGroup returns the key group of an encoded key (types.EncodeKey of
// the key columns). Exchanges route rows with it and keyed state files
// keys under it, so both agree on which subtask owns a key.
func KeyGroup(key []byte) int { return int(xxhash.Sum64(key) % MaxParallelism) }

// KeyGroupRange is the key groups [Start, End) one subtask owns.
type KeyGroupRange struct{ Start, End int }

// RangeFor returns the key groups subtask owns at parallelism p, with
// Flink's formula (KeyGroupRangeAssignment), so that SubtaskFor of every
// group in the range is subtask.
func RangeFor(subtask, p int) KeyGroupRange {
	return KeyGroupRange{
		Start: (subtask*MaxParallelism + p - 1) / p,
		End:   ((subtask+1)*MaxParallelism-1)/p + 1,
	}
}

// SubtaskFor returns the subtask that owns key group kg at parallelism p;
// it is the inverse of RangeFor.
func SubtaskFor(kg, p int) int { return kg * p / MaxParallelism }

// Contains reports whether kg is in r.
func (r KeyGroupRange) Contains(kg int) bool { return kg >= r.Start && kg < r.End }
