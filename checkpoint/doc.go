// Package checkpoint will own checkpoint coordination: injecting barriers
// into sources, collecting acknowledgements, writing checkpoint metadata
// durably and notifying operators on completion, as in Flink's
// asynchronous barrier snapshots. The dataflow runtime already carries
// barriers in order with the data and aligns them per operator
// (dataflow.Snapshotter, dataflow.CheckpointListener); this package is
// where the coordinator and the Pebble state backend arrive next.
package checkpoint
