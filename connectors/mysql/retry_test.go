package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"
)

// retryWrite retries transient errors up to the attempts given, with the
// 100 ms, 200 ms ... backoff, and returns other errors at once.
func TestRetryWrite(t *testing.T) {
	calls := 0
	start := time.Now()
	err := retryWrite(context.Background(), 3, func() error { calls++; return driver.ErrBadConn })
	if !errors.Is(err, driver.ErrBadConn) || calls != 3 {
		t.Fatalf("transient: %v after %d calls, want ErrBadConn after 3", err, calls)
	}
	// Two waits: 100 ms + 200 ms.
	if el := time.Since(start); el < 300*time.Millisecond || el > 3*time.Second {
		t.Fatalf("three attempts took %v, want about 300 ms", el)
	}
	calls = 0
	bad := errors.New("syntax")
	if err := retryWrite(context.Background(), 5, func() error { calls++; return bad }); err != bad || calls != 1 {
		t.Fatalf("permanent: %v after %d calls, want it after 1", err, calls)
	}
	calls = 0
	if err := retryWrite(context.Background(), 5, func() error {
		calls++
		if calls < 2 {
			return driver.ErrBadConn
		}
		return nil
	}); err != nil || calls != 2 {
		t.Fatalf("recovering: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = retryWrite(ctx, 5, func() error { return driver.ErrBadConn })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "last error: driver: bad connection") {
		t.Fatalf("cancelled: %v", err)
	}
}
