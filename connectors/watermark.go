package connectors

import (
	"time"

	"github.com/streamsql/streamsql/types"
)

// WatermarkPushDown is an optional interface of ScanSources that generate
// the table's watermarks themselves, per split (Flink's
// SupportsWatermarkPushDown). A Kafka source keeps one watermark per
// partition and emits their minimum, so that a partition read behind the
// others holds the watermark back instead of seeing its rows turn late,
// and an idle partition stops holding it back after the idle timeout.
//
// The planner calls PushWatermark while translating a plan in which the
// table's WATERMARK assigner sits right on its scan, before any source
// subtask is created; the assigner is then left out of the job.
type WatermarkPushDown interface {
	// PushWatermark hands over the strategy: wm evaluates `WATERMARK FOR
	// ... AS <expr>` on a row with all the table's columns in order, and
	// returns ok == false for NULL (which leaves the watermark as it is).
	// idle is 'table.exec.source.idle-timeout', 0 for never idle.
	// PushWatermark reports false when the source cannot take it; the
	// planner then keeps the assigner.
	PushWatermark(wm func(types.Row) (ts int64, ok bool, err error), idle time.Duration) bool
}
