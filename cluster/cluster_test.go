package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// tumbleQuery counts bids and their highest price per auction and 10 s
// tumbling window: a hash exchange on the auction between the source
// stage and the window stage, so the window's event time crosses the
// stage boundary as watermark markers.
const tumbleQuery = `
CREATE TABLE tumble_out (auction BIGINT, wstart TIMESTAMP(3), wend TIMESTAMP(3), num BIGINT, top BIGINT)
WITH ('connector' = 'blackhole');
INSERT INTO tumble_out
SELECT auction, window_start, window_end, COUNT(*), MAX(price)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
`

// compareModes runs query (DDL included) in one process and as a
// cluster job of 4 partitions, and compares the results.
func compareModes(t *testing.T, name, query string, minRows int, interfere func(*taskSet)) {
	b := startBroker(t)
	addr := b.Addr()
	want := runSingle(t, addr, toKafka(t, query, addr, name+"-single"), name+"-single")
	if len(want) < minRows {
		t.Fatalf("the single-process run wrote %d rows; the test needs at least %d to mean something", len(want), minRows)
	}
	got := runCluster(t, addr, name+".sql", clusterSettings(t, 4, "100 ms")+toKafka(t, query, addr, name+"-cluster"), name+"-cluster", interfere)
	sameMultiset(t, got, want)
	t.Logf("%d rows, identical", len(got))
}

func TestTumbleAfterShuffle(t *testing.T) {
	compareModes(t, "tumble", nexmarkDDL(t, testEvents, 0)+tumbleQuery, 100, nil)
}

func TestNexmarkQ5(t *testing.T) {
	compareModes(t, "q5", nexmarkDDL(t, testEvents, 0)+nexmarkQuery(t, "q5"), 20, nil)
}

func TestNexmarkQ8Join(t *testing.T) {
	compareModes(t, "q8", nexmarkDDL(t, testEvents, 0)+nexmarkQuery(t, "q8"), 10, nil)
}

// TestKillTaskMidRun cancels a task of each stage while the job runs
// (the input is rate-limited so that it lasts a few seconds), restarts
// it from its checkpoints, and still gets exactly the single-process
// result: no row of the internal topics is lost or read twice.
func TestKillTaskMidRun(t *testing.T) {
	query := nexmarkDDL(t, testEvents, 4000) + tumbleQuery
	compareModes(t, "kill", query, 100, func(ts *taskSet) {
		killed := 0
		for round := range 2 {
			time.Sleep(700 * time.Millisecond)
			for _, st := range ts.j.Stages() {
				id := TaskID{Stage: st.ID, Partition: (round + st.ID) % st.Parallelism}
				if ts.kill(id) {
					killed++
				}
				ts.start(id)
			}
		}
		if killed == 0 {
			t.Errorf("no task was still running when killed: the test proved nothing")
		}
		t.Logf("killed %d tasks mid-run", killed)
	})
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"CREATE TABLE t (a INT) WITH ('connector' = 'datagen');", "no INSERT"},
		{"SET 'state.checkpoints.dir' = '/tmp/x';\n" + "CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');\nCREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\nINSERT INTO o SELECT a FROM t;", "execution.checkpointing.interval"},
		{"SET 'parallelism.default' = '2';", "cluster.partitions"},
		{"SET 'cluster.partitions' = '0';", "between 1 and 128"},
	} {
		_, err := Compile(t.Context(), Config{Script: c.script, File: "j.sql", BootstrapServers: []string{"127.0.0.1:1"}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.script, err, c.want)
		}
	}
}

// TestIdleUpstreamTasks reads a 4-partition topic whose rows are all in
// partition 0, without end: the source tasks of partitions 1 to 3 have
// nothing to read and go idle (table.exec.source.idle-timeout). Their
// idle markers let the window stage's watermark follow task 0's alone,
// so the windows fire; without them it would wait for ever.
func TestIdleUpstreamTasks(t *testing.T) {
	b := startBroker(t)
	addr := b.Addr()
	if err := b.CreateTopic("clicks", 4); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, r := range []string{
		`{"k":"a","ts":"2024-01-01 00:00:01"}`, `{"k":"a","ts":"2024-01-01 00:00:02"}`, `{"k":"a","ts":"2024-01-01 00:00:03"}`,
		`{"k":"b","ts":"2024-01-01 00:00:11"}`, `{"k":"c","ts":"2024-01-01 00:00:25"}`,
	} {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "clicks", Partition: 0, Value: []byte(r)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	script := clusterSettings(t, 4, "100 ms") + fmt.Sprintf(`
SET 'table.exec.source.idle-timeout' = '300 ms';
CREATE TABLE clicks (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json',
      'scan.startup.mode' = 'earliest-offset');
CREATE TABLE counts (k STRING, wstart TIMESTAMP(3), num BIGINT)
WITH ('connector' = 'kafka', 'topic' = 'counts', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json',
      'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'counts');
INSERT INTO counts
SELECT k, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
`, addr)
	j, err := Compile(t.Context(), Config{Script: script, File: "idle.sql", BootstrapServers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"k":"a","wstart":"2024-01-01 00:00:00.000","num":3}`, `{"k":"b","wstart":"2024-01-01 00:00:10.000","num":1}`}
	runAll(t, j, 2*time.Minute, func(ts *taskSet) {
		deadline := time.Now().Add(90 * time.Second)
		var got []string
		for time.Now().Before(deadline) {
			if got = readTopic(t, addr, "counts"); len(got) >= len(want) {
				break
			}
		}
		for _, id := range j.Tasks() {
			ts.kill(id)
		}
		sameMultiset(t, got, want)
	})
}

// TestSingleExchange runs a global aggregate: a single exchange into a
// stage of one task (its topic has one partition), then a hash exchange
// on the sink's primary key back to 4 partitions. The final value of the
// one result row must be the single-process one, and the total count
// must be the number of bids generated.
func TestSingleExchange(t *testing.T) {
	b := startBroker(t)
	addr := b.Addr()
	const query = `
CREATE TABLE totals (k STRING, num BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO totals SELECT 'all', COUNT(*), SUM(price) FROM bid;
`
	upsert := func(topic string) string {
		return mustReplace(t, nexmarkDDL(t, testEvents, 0)+query, "'connector' = 'blackhole'", fmt.Sprintf(
			"'connector' = 'upsert-kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s', 'key.format' = 'json', 'value.format' = 'json', "+
				"'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '%s'", topic, addr, topic))
	}
	last := func(rows []string) string {
		if len(rows) == 0 {
			t.Fatal("no result")
		}
		return rows[len(rows)-1]
	}
	want := last(runSingle(t, addr, upsert("totals-single"), "totals-single"))
	// 46 bids in every 50 events (the generator's default proportions).
	if !strings.Contains(want, fmt.Sprintf(`"num":%d`, testEvents/50*46)) {
		t.Fatalf("single-process result %s does not count %d bids", want, testEvents/50*46)
	}
	j, err := Compile(t.Context(), Config{Script: clusterSettings(t, 4, "100 ms") + upsert("totals-cluster"), File: "totals.sql",
		BootstrapServers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", j.Describe())
	var single *Stage
	for _, st := range j.Stages() {
		for _, x := range st.Inputs {
			if x.Partitions == 1 {
				single = st
			}
		}
	}
	if single == nil || single.Parallelism != 1 {
		t.Fatalf("no stage of one task behind a one-partition topic:\n%s", j.Describe())
	}
	runAll(t, j, 3*time.Minute, nil)
	if got := last(readTopic(t, addr, "totals-cluster")); got != want {
		t.Fatalf("cluster result %s, single-process %s", got, want)
	}
}

// TestStatementSet runs two INSERTs as one job reading the bids once:
// the source stage writes two exchanges (two topics, two transactional
// writers per task), each read by a stage of its own.
func TestStatementSet(t *testing.T) {
	b := startBroker(t)
	addr := b.Addr()
	sink := func(name, cols, topic string) string {
		return fmt.Sprintf("CREATE TABLE %s (%s) WITH ('connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s', "+
			"'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '%s');\n", name, cols, topic, addr, topic)
	}
	script := func(suffix string) string {
		return nexmarkDDL(t, testEvents, 0) +
			sink("by_auction", "auction BIGINT, wstart TIMESTAMP(3), num BIGINT", "auction-"+suffix) +
			sink("by_bidder", "bidder BIGINT, wstart TIMESTAMP(3), top BIGINT", "bidder-"+suffix) + `
EXECUTE STATEMENT SET BEGIN
INSERT INTO by_auction SELECT auction, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
  GROUP BY auction, window_start, window_end;
INSERT INTO by_bidder SELECT bidder, window_start, MAX(price) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
  GROUP BY bidder, window_start, window_end;
END;
`
	}
	runSingle(t, addr, script("single"), "auction-single")
	j, err := Compile(t.Context(), Config{Script: clusterSettings(t, 4, "100 ms") + script("cluster"), File: "set.sql", BootstrapServers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", j.Describe())
	if n := len(j.Stages()[0].Outputs); n != 2 {
		t.Fatalf("the source stage writes %d exchanges, want 2:\n%s", n, j.Describe())
	}
	runAll(t, j, 3*time.Minute, nil)
	for _, topic := range []string{"auction", "bidder"} {
		want := readTopic(t, addr, topic+"-single")
		if len(want) < 100 {
			t.Fatalf("%s: the single-process run wrote %d rows", topic, len(want))
		}
		sameMultiset(t, readTopic(t, addr, topic+"-cluster"), want)
	}
}
