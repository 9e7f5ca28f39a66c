package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

// startProfiles starts the profiles of a bench run: a CPU profile into
// cpuFile, and into memFile the in-use heap profile of the moment the
// heap was largest, sampled every second (a profile at the end would
// show a heap the finished job has already let go). Either file may be
// "". The caller must call the returned stop once the run is over; it
// writes the files.
func startProfiles(cpuFile, memFile string) (stop func() error, err error) {
	var cpu *os.File
	if cpuFile != "" {
		if cpu, err = os.Create(cpuFile); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, err
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var peak bytes.Buffer // the profile at the largest heap so far
	var peakHeap uint64
	var sampleErr error
	if memFile != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse <= peakHeap {
					continue
				}
				peakHeap = ms.HeapInuse
				peak.Reset()
				if err := pprof.Lookup("heap").WriteTo(&peak, 0); err != nil {
					sampleErr = err
					return
				}
			}
		}()
	}
	return func() error {
		close(done)
		wg.Wait()
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cpu.Close())
		}
		if memFile != "" {
			errs = append(errs, sampleErr)
			if peak.Len() == 0 { // a run shorter than a second
				runtime.GC()
				errs = append(errs, pprof.Lookup("heap").WriteTo(&peak, 0))
			}
			if err := os.WriteFile(memFile, peak.Bytes(), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("heap profile: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
}
