package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// syncBuffer is a bytes.Buffer safe for the broker goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestKafkaCommand starts `streamsql kafka --port 0 --topic bills:4`,
// checks with kafka-go that the topic has 4 partitions, and stops it.
func TestKafkaCommand(t *testing.T) {
	var out, errOut syncBuffer
	stop := make(chan os.Signal, 1)
	done := make(chan int)
	go func() { done <- serveKafka([]string{"--port", "0", "--topic", "bills:4"}, &out, &errOut, stop) }()
	addrRE := regexp.MustCompile(`listening on (\S+) `)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("no address printed; stdout %q stderr %q", out.String(), errOut.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := (&kafka.Client{Addr: kafka.TCP(addr)}).Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"bills"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 4 {
		t.Fatalf("metadata %+v, want topic bills with 4 partitions", md.Topics)
	}
	stop <- os.Interrupt
	if rc := <-done; rc != 0 {
		t.Fatalf("exit code %d", rc)
	}
	if !strings.Contains(out.String(), "kafka broker stopped") {
		t.Fatalf("stdout %q", out.String())
	}
	if rc := serveKafka([]string{"--topic", "bills"}, &out, &errOut, stop); rc != 2 || !strings.Contains(errOut.String(), "want name:partitions") {
		t.Fatalf("bad --topic: exit %d, stderr %q", rc, errOut.String())
	}
}
