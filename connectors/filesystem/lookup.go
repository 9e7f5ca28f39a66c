package filesystem

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Lookup makes the filesystem table a lookup table (connectors.LookupSource):
// each subtask of a lookup join reads all the table's files once, when
// it opens, into a map by key. The files are not read again, so rows
// added to them later are not seen.
func (s *scan) Lookup(keys []int) (connectors.Lookuper, error) {
	for _, k := range keys {
		if k < 0 || k >= len(s.t.Columns) {
			return nil, fmt.Errorf("filesystem lookup: key column %d of %d", k, len(s.t.Columns))
		}
	}
	return connectors.NewLoadingLookuper(keys, s.readAll), nil
}

// readAll reads every row of the table's files, as one subtask of one.
func (s *scan) readAll(ctx context.Context) ([]types.Row, error) {
	src := &Source{sc: s, subtask: 0, parallelism: 1}
	if err := src.Open(nil); err != nil {
		return nil, err
	}
	defer src.Close()
	var out collect
	if err := src.Run(ctx, &out); err != nil {
		return nil, fmt.Errorf("filesystem lookup of table '%s': %w", s.t.Name, err)
	}
	return out.rows, nil
}

// collect is a dataflow.SourceOutput keeping the rows.
type collect struct {
	dataflow.NoControl
	rows []types.Row
}

func (c *collect) Emit(ch *dyntable.Chunk) error {
	for _, x := range ch.Changes {
		c.rows = append(c.rows, x.Row)
	}
	return nil
}

func (c *collect) EmitWatermark(int64) error { return nil }
