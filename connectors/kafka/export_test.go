package kafka

// SetPartitionMaxBytes makes fetches small for a test and returns the
// function that restores the size (external tests slow the source down
// with it, to checkpoint mid-stream).
func SetPartitionMaxBytes(n int32) (restore func()) {
	old := partitionMaxBytes
	partitionMaxBytes = n
	return func() { partitionMaxBytes = old }
}
