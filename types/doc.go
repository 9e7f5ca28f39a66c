// Package types owns streamsql's SQL data types and runtime values: the
// Type descriptor the planner checks with, the compact Value every row is
// made of, their total order, hashing and order-preserving key encoding,
// and the canonical text form used by print sinks and golden tests.
//
// Values are immutable once built. A Row may therefore be shared between
// operators and state without copying; whoever wants to change a row
// builds a new one.
package types
