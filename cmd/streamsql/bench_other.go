//go:build !unix

package main

// cpuSeconds and peakRSSMB are not measured on this platform; the bench
// reports zero for them.
func cpuSeconds() float64 { return 0 }
func peakRSSMB() float64  { return 0 }
