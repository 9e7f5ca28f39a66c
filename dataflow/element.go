package dataflow

import (
	"fmt"
	"math"

	"github.com/streamsql/streamsql/dyntable"
)

// ElementKind tells what an Element carries.
type ElementKind uint8

// The element kinds: data and the control elements. Every control
// signal of the runtime is an element, in order with the data it
// describes; none travels on a side channel.
const (
	KindData ElementKind = iota
	// KindWatermark declares that no row older than Element.Watermark
	// follows from this sender.
	KindWatermark
	// KindBarrier cuts the stream for checkpoint Element.Barrier.
	KindBarrier
	// KindEndOfInput: the sender sends nothing more.
	KindEndOfInput
	// KindIdle: the sender has no input for now (its source has been
	// silent for table.exec.source.idle-timeout). It is left out of the
	// watermark minimum until it sends data or a watermark again. A node
	// whose every sender is idle is idle itself and says so downstream.
	KindIdle
	// KindCheckpointComplete: checkpoint Element.Barrier.CheckpointID has
	// completed everywhere. Sources send it into their streams when the
	// coordinator tells them, so it reaches every operator once, after
	// barrier n and before barrier n+1: a two-phase-commit sink commits n
	// before it pre-commits n+1.
	KindCheckpointComplete
)

func (k ElementKind) String() string {
	switch k {
	case KindData:
		return "data"
	case KindWatermark:
		return "watermark"
	case KindBarrier:
		return "barrier"
	case KindEndOfInput:
		return "end-of-input"
	case KindIdle:
		return "idle"
	case KindCheckpointComplete:
		return "checkpoint-complete"
	}
	return fmt.Sprintf("ElementKind(%d)", k)
}

// MinWatermark is the watermark before any event time is known.
const MinWatermark = math.MinInt64

// MaxWatermark is the final watermark of a bounded input: event time is
// complete.
const MaxWatermark = math.MaxInt64

// Barrier marks a consistent cut of the stream for checkpoint ID.
type Barrier struct {
	CheckpointID int64
	// Savepoint is set for a user-requested portable snapshot.
	Savepoint bool
}

// Element is the single message type of the dataflow: a chunk of changes
// or one of the control elements, in stream order.
type Element struct {
	Kind      ElementKind
	Chunk     *dyntable.Chunk // KindData
	Watermark int64           // KindWatermark: event time in ns since the epoch
	Barrier   Barrier         // KindBarrier, KindCheckpointComplete
}

// DataElement wraps a chunk.
func DataElement(c *dyntable.Chunk) Element { return Element{Kind: KindData, Chunk: c} }

// WatermarkElement wraps a watermark.
func WatermarkElement(ts int64) Element { return Element{Kind: KindWatermark, Watermark: ts} }
