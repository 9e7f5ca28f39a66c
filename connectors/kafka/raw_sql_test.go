package kafka_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
)

// The raw format writes a record's value (and key, with 'key.format' =
// 'raw') as the bytes of one column, a NULL as a null value, as Flink's;
// franz-go reads the records back independently, and the bytes expected
// are worked out by hand (INT 258 is 00 00 01 02 big-endian, the key's
// default, and 02 01 00 00 little-endian, as the value is set to). A raw
// source reads them back, the null value as a row holding NULL.
func TestSQLRawFormat(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"out"}, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	job, err := runSQL(t, fmt.Sprintf(`
CREATE TABLE src (v INT) WITH ('connector' = 'values');
INSERT INTO src VALUES (258), (CAST(NULL AS INT)), (-1);
CREATE TABLE dst (v INT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '%s',
  'key.format' = 'raw', 'key.fields' = 'v', 'value.format' = 'raw', 'value.raw.endianness' = 'little-endian');
INSERT INTO dst SELECT v FROM src;
`, b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range readRecords(t, b.Addr(), "out", true, false) {
		got = append(got, fmt.Sprintf("key=%x(%v) value=%x(%v)", r.Key, r.Key == nil, r.Value, r.Value == nil))
	}
	sort.Strings(got)
	want := []string{"key=(true) value=(true)", "key=00000102(false) value=02010000(false)", "key=ffffffff(false) value=ffffffff(false)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	var out srcSyncBuffer
	rd := srcRunSQL(t, &out, fmt.Sprintf(`
CREATE TABLE back (v INT) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'raw', 'raw.endianness' = 'little-endian');
CREATE TABLE sink (v INT, isnull BOOLEAN) WITH ('connector' = 'print');
INSERT INTO sink SELECT v, v IS NULL FROM back;
`, b.Addr()))
	if err := rd.Wait(); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Strings(rows)
	if w := "+I[-1, false]\n+I[258, false]\n+I[NULL, true]"; strings.Join(rows, "\n") != w {
		t.Fatalf("read back\n%s\nwant\n%s", strings.Join(rows, "\n"), w)
	}
}
