package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestClusterCommand runs `streamsql cluster --workers 2` on a small job
// of 2 stages × 2 partitions: it must print an assignment that spreads
// the 4 tasks 2 and 2, and stop everything on SIGTERM.
func TestClusterCommand(t *testing.T) {
	bin := binary(t)
	// The checkpoint directory comes from the command (${checkpoints}).
	job := writeFile(t, "job.sql", clusterScript("${checkpoints}", "SUM"))
	cmd := exec.Command(bin, "cluster", "--workers", "2", "-f", job)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var text strings.Builder
	read := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			text.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
		close(read)
	}()
	// One "tasks:" block with both workers holding two tasks each.
	spread := regexp.MustCompile(`tasks:\n  worker-1: s\d-p\d s\d-p\d\n  worker-2: s\d-p\d s\d-p\d\n`)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		mu.Lock()
		got := text.String()
		mu.Unlock()
		if spread.MatchString(got) {
			if !strings.Contains(got, "cluster: job wtest, 4 tasks, 2 workers") {
				t.Fatalf("no header: %s", got)
			}
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-read
			t.Fatalf("no spread assignment printed:\n%s\nstderr:\n%s", got, errOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { <-read; done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, errOut.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("did not stop on SIGTERM")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(text.String(), "cluster: stopped") || !strings.Contains(errOut.String(), "[worker-2]") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", text.String(), errOut.String())
	}
}
