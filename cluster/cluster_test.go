package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/checkpoint"
	connkafka "github.com/streamsql/streamsql/connectors/kafka"
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
func TestIdleUpstreamTasks(t *testing.T) { testIdleUpstream(t, 4, "300 ms") }

// TestSourceTasksWithoutPartitions reads a topic of one partition with
// 4 source tasks and no idle timeout: tasks 1 to 3 have no partition and
// say at once that they are idle, as the single-process source's
// subtasks without partitions follow the others' watermark.
func TestSourceTasksWithoutPartitions(t *testing.T) { testIdleUpstream(t, 1, "0 ms") }

func testIdleUpstream(t *testing.T, partitions int, idleTimeout string) {
	b := startBroker(t)
	addr := b.Addr()
	if err := b.CreateTopic("clicks", partitions); err != nil {
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
SET 'table.exec.source.idle-timeout' = '%[2]s';
CREATE TABLE clicks (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json',
      'scan.startup.mode' = 'earliest-offset');
CREATE TABLE counts (k STRING, wstart TIMESTAMP(3), num BIGINT)
WITH ('connector' = 'kafka', 'topic' = 'counts', 'properties.bootstrap.servers' = '%[1]s', 'format' = 'json',
      'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'counts');
INSERT INTO counts
SELECT k, window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end;
`, addr, idleTimeout)
	j, err := Compile(t.Context(), Config{Script: script, File: "idle.sql", BootstrapServers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"k":"a","wstart":"2024-01-01 00:00:00.000","num":3}`, `{"k":"b","wstart":"2024-01-01 00:00:10.000","num":1}`}
	runAll(t, j, 2*time.Minute, func(ts *taskSet) {
		deadline := time.Now().Add(60 * time.Second)
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

// TestTopicPartitionMismatch: an internal topic left with another
// partition count (cluster.partitions changed since the job first ran)
// stops the task with an error that names the topic and the option.
func TestTopicPartitionMismatch(t *testing.T) {
	b := startBroker(t)
	addr := b.Addr()
	if err := b.CreateTopic("streamsql-mismatch-s1", 2); err != nil {
		t.Fatal(err)
	}
	j, err := Compile(t.Context(), Config{Script: clusterSettings(t, 4, "100 ms") + nexmarkDDL(t, 100, 0) + tumbleQuery,
		File: "mismatch.sql", BootstrapServers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	err = j.RunTask(t.Context(), TaskID{Stage: 1, Partition: 0})
	if err == nil || !strings.Contains(err.Error(), "'streamsql-mismatch-s1' has 2 partitions, but the job needs 4 (cluster.partitions)") {
		t.Fatalf("got %v", err)
	}
	if err := j.RunTask(t.Context(), TaskID{Stage: 1, Partition: 4}); err == nil || !strings.Contains(err.Error(), "has 4 tasks") {
		t.Fatalf("a task beyond the partitions: got %v", err)
	}
}

// TestPlainCheckpointPath: state.checkpoints.dir given as a path is a
// file:// store in cluster mode. Each task's checkpoints are in an owner
// epoch's folder of the shared directory, and its working state is not:
// no task's Pebble databases are worked on in the shared folder.
func TestPlainCheckpointPath(t *testing.T) {
	b := startBroker(t)
	dir := t.TempDir()
	settings := fmt.Sprintf("SET 'execution.checkpointing.interval' = '100 ms';\nSET 'state.checkpoints.dir' = '%s';\nSET 'cluster.partitions' = '2';\n"+
		"SET 'state.backend.type' = 'pebble';\n", dir)
	j, err := Compile(t.Context(), Config{Script: settings + nexmarkDDL(t, 2000, 0) + tumbleQuery, File: "plain.sql",
		BootstrapServers: []string{b.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.ToSlash(dir) + "/plain/s1-p0"; j.checkpointDir(TaskID{1, 0}) != want {
		t.Fatalf("checkpoint folder %s, want %s", j.checkpointDir(TaskID{1, 0}), want)
	}
	runAll(t, j, 2*time.Minute, nil)
	var chk, work []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir() && d.Name() == "work", strings.HasSuffix(p, ".log"), strings.HasPrefix(d.Name(), "MANIFEST") && !strings.Contains(rel, "chk-"):
			work = append(work, rel)
		case d.Name() == "_metadata":
			chk = append(chk, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(work) > 0 {
		t.Errorf("working state in the shared folder: %v", work)
	}
	// Every task of both stages completed checkpoints in its epoch folder.
	for _, id := range j.Tasks() {
		prefix := filepath.Join("plain", id.String(), "e-1", "chk-")
		if !slices.ContainsFunc(chk, func(s string) bool { return strings.HasPrefix(s, prefix) }) {
			t.Errorf("task %s has no checkpoint under %s: %v", id, prefix, chk)
		}
	}
}

// TestTaskOwnedTwice starts a second run of a task of each stage while
// the first still runs, as when the group hands a task to a new worker
// while its former one, stalled, has not noticed. The first run must
// stop, fenced (by the checkpoint store's owner epoch or by the Kafka
// transactional id), the second goes on from the newest checkpoint, and
// the result is still exactly the single-process one.
func TestTaskOwnedTwice(t *testing.T) {
	var runs *taskSet
	var twice []TaskID
	compareModes(t, "twice", nexmarkDDL(t, testEvents, 4000)+tumbleQuery, 100, func(ts *taskSet) {
		runs = ts
		time.Sleep(700 * time.Millisecond)
		for _, st := range ts.j.Stages() {
			id := TaskID{Stage: st.ID, Partition: st.ID % st.Parallelism}
			twice = append(twice, id)
			ts.start(id) // the first run is not stopped
		}
	})
	runs.mu.Lock()
	defer runs.mu.Unlock()
	for _, id := range twice {
		ended := runs.ended[id]
		if len(ended) != 2 {
			t.Fatalf("task %s: %d runs ended, want 2", id, len(ended))
		}
		if first := ended[0]; !errors.Is(first, checkpoint.ErrFenced) && !errors.Is(first, connkafka.ErrFenced) {
			t.Errorf("task %s: the first run ended with %v, want it fenced", id, first)
		}
	}
}
