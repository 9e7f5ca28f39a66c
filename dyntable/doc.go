// Package dyntable owns the changelog model that ties streams to dynamic
// tables: row kinds (+I, -U, +U, -D), chunks of changes, changelog modes
// that the planner infers per operator, and the conversions between a
// changelog and the table it describes — materializing a changelog into a
// table (by primary key or as a multiset) and encoding a changelog for a
// sink as append-only, retract or upsert.
package dyntable
