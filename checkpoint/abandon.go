package checkpoint

// Abandon releases the state stores of a job that failed to start
// (dataflow.Start returned an error, so Start is never called): a new
// run of the job may then open the directories. Closed is closed.
func (c *Coordinator) Abandon() { c.closeStores() }
