package dataflow

import (
	"fmt"
	"math"

	"github.com/streamsql/streamsql/dyntable"
)

// ElementKind tells what an Element carries.
type ElementKind uint8

// The element kinds: data and the three control elements.
const (
	KindData ElementKind = iota
	KindWatermark
	KindBarrier
	KindEndOfInput
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
	Barrier   Barrier         // KindBarrier
}

// DataElement wraps a chunk.
func DataElement(c *dyntable.Chunk) Element { return Element{Kind: KindData, Chunk: c} }

// WatermarkElement wraps a watermark.
func WatermarkElement(ts int64) Element { return Element{Kind: KindWatermark, Watermark: ts} }
