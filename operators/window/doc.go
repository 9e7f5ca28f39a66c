// Package window holds the window operators: the operators whose rows
// belong to event-time (or processing-time) windows and leave when a
// window fires.
//
//   - window_slices.go: WindowSpec (TUMBLE, HOP, CUMULATE, SESSION, and
//     windows assigned upstream), its slicing arithmetic and Windows,
//     which lists the windows a time falls in;
//   - window_tvf.go: WindowTableFunction, the TUMBLE/HOP/CUMULATE table
//     functions as an operator (rows get window_start, window_end,
//     window_time);
//   - window_agg.go: WindowAgg, window aggregation over slices (Flink's
//     WindowAggregate with slice sharing), for all kinds but SESSION;
//   - window_session.go: SessionAgg, SESSION window aggregation;
//   - window_rank.go: WindowRank, Top-N per window (window ranking and
//     window deduplication);
//   - windowjoin.go: the window join (Flink's WindowJoinOperator);
//   - timers.go: windowTimers, the event-time timers in window ends.
//
// A window fires when the watermark reaches window_end - 1 ms (its
// window_time, WindowTimeOffset before its end); a row whose windows
// have all fired is late, dropped and counted per operator.
//
// The window operators reuse the rest of the runtime rather than copy
// it: aggregates come from operators.Aggregator (GroupAgg's aggregate
// code, with the merge of states that slices and sessions need), and
// timers, the emitter, the join key encoding and the join rows state
// from operators/internal/kit, which package operators uses too.
//
// Like every operator, these know nothing of SQL: the planner hands them
// a spec of column indexes and compiled aggregates (planner/node_window.go
// and build_window*.go).
package window
