package main

// `streamsql kafka`: a local Kafka-protocol broker for development and
// demos (kfake, in process; see connectors/kafka/broker). The product's
// Kafka client is kafka-go; the broker is only linked for this command.

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
)

const kafkaUsage = `Usage: streamsql kafka [--port 9092] [--data-dir DIR] [--topic name:partitions]...

Runs a local Kafka-protocol broker (transactions, read_committed, consumer
groups) until interrupted. With --data-dir its topics and offsets survive a
restart. Topics are also created on first use, with --partitions partitions.

Flags:
`

type topicFlags []string

func (t *topicFlags) String() string     { return strings.Join(*t, ",") }
func (t *topicFlags) Set(v string) error { *t = append(*t, v); return nil }

// serveKafka runs the broker until stop receives.
func serveKafka(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fs := flag.NewFlagSet("streamsql kafka", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 9092, "listen on 127.0.0.1:`port` (0 picks a free port)")
	dataDir := fs.String("data-dir", "", "keep the broker's data in `dir` across restarts (default: in memory)")
	parts := fs.Int("partitions", 1, "partitions of topics created on first use")
	maxTxn := fs.Int("transaction-max-timeout-ms", 0, "the broker's transaction.max.timeout.ms (default 900000)")
	var topics topicFlags
	fs.Var(&topics, "topic", "create topic `name:partitions` at start; may be repeated")
	fs.Usage = func() {
		fmt.Fprint(stderr, kafkaUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	type topic struct {
		name string
		n    int
	}
	var want []topic
	for _, t := range topics {
		name, n, ok := strings.Cut(t, ":")
		p, err := strconv.Atoi(n)
		if !ok || name == "" || err != nil || p < 1 {
			fmt.Fprintf(stderr, "streamsql kafka: --topic %q: want name:partitions, e.g. bills:4\n", t)
			return 2
		}
		want = append(want, topic{name, p})
	}
	b, err := broker.Start(broker.Config{Port: *port, DataDir: *dataDir, Partitions: *parts, MaxTransactionTimeoutMs: *maxTxn})
	if err != nil {
		fmt.Fprintln(stderr, "streamsql kafka:", err)
		return 1
	}
	defer b.Close()
	for _, t := range want {
		if err := b.CreateTopic(t.name, t.n); err != nil {
			// With --data-dir the topic may exist from an earlier run.
			fmt.Fprintf(stderr, "streamsql kafka: topic %s: %v\n", t.name, err)
			continue
		}
		fmt.Fprintf(stdout, "topic %s: %d partitions\n", t.name, t.n)
	}
	fmt.Fprintf(stdout, "kafka broker listening on %s ('properties.bootstrap.servers' = '%s'); Ctrl-C stops it\n", b.Addr(), b.Addr())
	<-stop
	fmt.Fprintln(stdout, "kafka broker stopped")
	return 0
}
