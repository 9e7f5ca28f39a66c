package expr

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestCPUBench(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rows := benchRows()
	for _, sql := range []string{"a > 10 AND b < 100", "a * 2 + b", "a BETWEEN 5 AND 20", "a IN (1, 2, 3, 5, 8, 13)", "d * 2.0e0 + a", "price * 2", "s LIKE 'He%'", "ts - INTERVAL '5' SECOND", "CONCAT(s, '!')"} {
		e := benchBind(&testing.B{}, sql)
		const N = 5000000
		start := cpuNow()
		for i := 0; i < N; i++ {
			e.Eval(rows[i&1023])
		}
		el := cpuNow() - start
		fmt.Printf("%-35s %6.1f ns/op (cpu)\n", sql, float64(el)/N)
	}
}
