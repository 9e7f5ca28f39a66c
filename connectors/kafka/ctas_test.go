package kafka_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
)

// CREATE TABLE ... AS SELECT into a topic that does not exist yet: the
// embedded broker creates topics on first use (its help text says so),
// and the sink asks for that, at least once and exactly once, as Flink's
// producer does. The records read back are the query's rows.
func TestCTASIntoNewTopic(t *testing.T) {
	for _, g := range []string{"at-least-once", "exactly-once"} {
		t.Run(g, func(t *testing.T) {
			b, err := broker.Start(broker.Config{}) // no topics
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			topic := "new_" + g
			j, err := runSQL(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE src (k BIGINT) WITH ('connector' = 'values');
INSERT INTO src VALUES (1), (2), (3);
CREATE TABLE fresh WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s',
  'format' = 'json', 'sink.delivery-guarantee' = '%s', 'sink.transactional-id-prefix' = 'ctas')
AS SELECT k * 10 AS k FROM src;
`, t.TempDir(), topic, b.Addr(), g))
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range readRecords(t, b.Addr(), topic, g == "exactly-once", false) {
				got = append(got, string(r.Value))
			}
			sort.Strings(got)
			if fmt.Sprint(got) != `[{"k":10} {"k":20} {"k":30}]` {
				t.Fatalf("topic %s holds %v", topic, got)
			}
		})
	}
}
