// Package broker runs an in-process Kafka-protocol broker for tests,
// demos and the embedded default of the examples.
//
// It wraps kfake (github.com/twmb/franz-go/pkg/kfake), an in-process Go
// implementation of the Kafka protocol with transactions, fencing,
// transaction timeouts, read_committed fetches, consumer groups and
// optional persistence. Only tests and the `streamsql kafka` subcommand
// import this package: the product's Kafka client is kafka-go, and no
// product code path talks to Kafka through franz-go.
//
// Lifecycle: Start returns a running broker; Close stops it. With a data
// directory the broker keeps its topics across restarts.
package broker

import (
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Config configures a local broker.
type Config struct {
	// Port to listen on, 0 for any free port.
	Port int
	// DataDir persists the broker's state; empty keeps it in memory.
	DataDir string
	// Topics to create at start, each with Partitions partitions.
	Topics     []string
	Partitions int
	// MaxTransactionTimeoutMs is the broker's transaction.max.timeout.ms;
	// 0 keeps the default (900,000 ms).
	MaxTransactionTimeoutMs int
}

// Broker is a running local broker.
type Broker struct {
	c *kfake.Cluster
}

// Start starts a one-node broker.
func Start(cfg Config) (*Broker, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}
	if cfg.Port != 0 {
		opts = append(opts, kfake.Ports(cfg.Port))
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	p := cfg.Partitions
	if p <= 0 {
		p = 1
	}
	opts = append(opts, kfake.DefaultNumPartitions(p))
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(p), cfg.Topics...))
	}
	if cfg.MaxTransactionTimeoutMs > 0 {
		opts = append(opts, kfake.BrokerConfigs(map[string]string{
			"transaction.max.timeout.ms": strconv.Itoa(cfg.MaxTransactionTimeoutMs),
		}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("local kafka broker: %w", err)
	}
	return &Broker{c: c}, nil
}

// Addr is the broker's host:port, for 'properties.bootstrap.servers'.
func (b *Broker) Addr() string { return b.c.ListenAddrs()[0] }

// CreateTopic creates a topic with the given number of partitions.
func (b *Broker) CreateTopic(topic string, partitions int) error {
	return b.c.CreateTopic(topic, int32(partitions), nil)
}

// Cluster exposes the underlying kfake cluster for fault-injection tests.
func (b *Broker) Cluster() *kfake.Cluster { return b.c }

// Close stops the broker.
func (b *Broker) Close() { b.c.Close() }
