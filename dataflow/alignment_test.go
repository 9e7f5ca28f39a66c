package dataflow

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// trace collects what one node subtask's operator, outputs and
// checkpointer were asked to do, in order.
type trace struct{ lines []string }

func (t *trace) add(format string, args ...any) {
	t.lines = append(t.lines, fmt.Sprintf(format, args...))
}

// traceOp records every call; it declines a snapshot when asked to.
type traceOp struct {
	BaseOperator
	t       *trace
	decline bool
}

func (o *traceOp) ProcessChunk(input int, c *dyntable.Chunk, out Collector) error {
	o.t.add("op: %d rows on input %d", c.Len(), input)
	return nil
}

func (o *traceOp) ProcessWatermark(wm int64, _ Collector) error {
	o.t.add("op: watermark %s", wmText(wm))
	return nil
}

func (o *traceOp) SnapshotState(b Barrier) error {
	o.t.add("op: snapshot %d", b.CheckpointID)
	if o.decline {
		return fmt.Errorf("cannot")
	}
	return nil
}

func (o *traceOp) NotifyCheckpointComplete(id int64) error {
	o.t.add("op: complete %d", id)
	return nil
}

func (o *traceOp) Finish(Collector) error {
	o.t.add("op: finish")
	return nil
}

// traceOutput records what the node forwards.
type traceOutput struct{ t *trace }

func (o traceOutput) send(e Element) error {
	switch e.Kind {
	case KindData:
		o.t.add("out: %d rows", e.Chunk.Len())
	case KindWatermark:
		o.t.add("out: watermark %s", wmText(e.Watermark))
	case KindBarrier, KindCheckpointComplete:
		o.t.add("out: %s %d", e.Kind, e.Barrier.CheckpointID)
	default:
		o.t.add("out: %s", e.Kind)
	}
	return nil
}

// traceCheckpointer records acknowledgements and declines.
type traceCheckpointer struct{ t *trace }

func (c traceCheckpointer) SourceBarrier(Barrier, *Node, int, []byte) {}
func (c traceCheckpointer) SnapshotSubtask(b Barrier, _ *Node, _ int, _ state.Store, _ func(int64)) error {
	c.t.add("ack %d", b.CheckpointID)
	return nil
}
func (c traceCheckpointer) Decline(b Barrier, _ *Node, _ int, err error) {
	c.t.add("decline %d: %v", b.CheckpointID, err)
}

func wmText(wm int64) string {
	switch wm {
	case MaxWatermark:
		return "max"
	case MinWatermark:
		return "min"
	}
	return strconv.FormatInt(wm, 10)
}

// TestAlignment runs testdata/alignment against one node subtask's
// runtime: how it combines watermarks and idleness over its senders,
// aligns barriers (holding back the senders that delivered one), hands
// checkpoint notices on once, and finishes. Commands:
//
//	node senders=<n>[,<n>...] [decline]   a new subtask; one count of senders per input
//	recv                                   input: "<input>/<sender> <element>" lines, where
//	                                       <element> is "data <rows>", "wm <t>", "idle",
//	                                       "barrier <id>", "complete <id>" or "end"
func TestAlignment(t *testing.T) {
	var nr *nodeRuntime
	var tr *trace
	datadriven.RunTest(t, "testdata/alignment", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "node":
			tr = &trace{}
			var senders string
			d.ScanArgs(t, "senders", &senders)
			n := &Node{Name: "n", Parallelism: 1}
			j := &Job{opts: Options{Checkpointer: traceCheckpointer{tr}}}
			op := &traceOp{t: tr, decline: d.HasArg("decline")}
			nr = &nodeRuntime{job: j, node: n, op: op, store: state.NewMemoryStore("n"), outputs: []output{traceOutput{tr}},
				counters: &nodeCounters{wm: make([]atomic.Int64, 1), snapshotNanos: make([]atomic.Int64, 1), stateBytes: make([]atomic.Int64, 1)},
				wm:       MinWatermark, outWm: MinWatermark}
			nr.collector = collector{nr: nr}
			for _, c := range strings.Split(senders, ",") {
				k, err := strconv.Atoi(c)
				if err != nil {
					t.Fatal(err)
				}
				nr.inputs = append(nr.inputs, newInputState(k))
				nr.totalSenders += k
			}
			return "ok\n"
		case "recv":
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				f := strings.Fields(line)
				var in, snd int
				if _, err := fmt.Sscanf(f[0], "%d/%d", &in, &snd); err != nil {
					t.Fatalf("bad sender %q", f[0])
				}
				arg := func() int64 {
					v, err := strconv.ParseInt(f[2], 10, 64)
					if err != nil {
						t.Fatalf("bad argument in %q", line)
					}
					return v
				}
				var e Element
				switch f[1] {
				case "data":
					c := &dyntable.Chunk{}
					for i := int64(0); i < arg(); i++ {
						c.Append(dyntable.Insert, types.Row{types.NewInt(i)})
					}
					e = DataElement(c)
				case "wm":
					e = WatermarkElement(arg())
				case "idle":
					e = Element{Kind: KindIdle}
				case "barrier":
					e = Element{Kind: KindBarrier, Barrier: Barrier{CheckpointID: arg()}}
				case "complete":
					e = Element{Kind: KindCheckpointComplete, Barrier: Barrier{CheckpointID: arg()}}
				case "end":
					e = Element{Kind: KindEndOfInput}
				default:
					t.Fatalf("unknown element %q", f[1])
				}
				tr.add("%s", line)
				if err := nr.handle(in, snd, e); err != nil {
					tr.add("error: %v", err)
				}
			}
			out := strings.Join(tr.lines, "\n") + "\n"
			tr.lines = nil
			return out
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}
