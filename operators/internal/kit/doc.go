// Package kit holds the pieces that the operators of package operators
// and of its sub-package window share, so that each exists once:
//
//   - timers.go: Timers, the keyed event-time timer service every
//     operator over time uses (windows, interval, temporal and window
//     joins, OVER), with the sortable time encoding of its keys and AddSat;
//   - rows.go: Rows, a list of rows with matched flags kept as one state
//     value (interval and window joins), and its codec;
//   - join.go: the canonical join-key encoding (EncodeKey) and Shape, the
//     concatenation and NULL padding of a two-input join's output rows;
//   - codec.go: the state codecs of struct{} and int64;
//   - emit.go: Emitter, which gathers an operator's output into one chunk.
//
// It is internal: nothing outside operators/ sees it, and its names are
// exported only so that the two packages can share them.
package kit
