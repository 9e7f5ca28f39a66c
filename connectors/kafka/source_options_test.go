package kafka

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
)

// TestSourceOptionErrors: invalid source options are refused at CREATE
// time with a message naming the option.
func TestSourceOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opts []string
		want string
	}{
		{[]string{"format", ""}, "requires option 'format'"},
		{[]string{"format", "avro"}, "'format' must be 'json', 'csv', 'raw' or 'debezium-json'"},
		{[]string{"topic", "", "topic-pattern", "("}, "option 'topic-pattern'"},
		{[]string{"topic-pattern", "a.*"}, "'topic' and 'topic-pattern' cannot both be set"},
		{[]string{"topic", ""}, "requires option 'topic' or 'topic-pattern'"},
		{[]string{"scan.startup.mode", ""}, "'properties.group.id' is required with 'group-offsets'"},
		{[]string{"scan.startup.mode", "newest"}, "option 'scan.startup.mode' must be"},
		{[]string{"scan.startup.mode", "timestamp"}, "'scan.startup.timestamp-millis' is required"},
		{[]string{"scan.startup.timestamp-millis", "5"}, "applies only when 'scan.startup.mode' is 'timestamp'"},
		{[]string{"scan.startup.mode", "specific-offsets", "scan.startup.specific-offsets", "partition:0;offset:1"}, "is not 'partition:<n>,offset:<n>'"},
		{[]string{"scan.bounded.mode", "earliest-offset"}, "option 'scan.bounded.mode' must be"},
		{[]string{"properties.isolation.level", "serializable"}, "'read_committed' or 'read_uncommitted'"},
		{[]string{"json.ignore-parse-errors", "yes"}, "must be 'true' or 'false'"},
		{[]string{"scan.parallelism", "0"}, "'scan.parallelism' must be a positive integer"},
		{[]string{"value.format", "csv"}, "'format' ('json') and 'value.format' ('csv') disagree"},
		{[]string{"no.such.option", "1"}, "unsupported option(s) for connector 'kafka': 'no.such.option'"},
		{[]string{"value.fields-include", "EXCEPT_KEY"}, "reads the columns from the record value only"},
	} {
		conn, err := connectors.Lookup("kafka")
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.(connectors.SourceConnector).NewScan(srcTable("localhost:1", "t", append([]string{"scan.bounded.mode", ""}, c.opts...)...), &connectors.Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("options %q: got %v, want an error containing %q", c.opts, err, c.want)
		}
	}
}

// TestTopicPattern reads every topic whose whole name matches.
func TestTopicPattern(t *testing.T) {
	b := srcBroker(t, 1, "pa", "pb", "xpa")
	produce(t, b.Addr(), "pa", srcMsg{value: js(1, "pa")})
	produce(t, b.Addr(), "pb", srcMsg{value: js(2, "pb")})
	produce(t, b.Addr(), "xpa", srcMsg{value: js(3, "xpa")})
	var got []string
	for sub := 0; sub < 2; sub++ {
		r, err := readAll(t, openSource(t, srcTable(b.Addr(), "", "topic", "", "topic-pattern", "p."), sub, 2))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.got()...)
	}
	sameRows(t, "pattern p.", got, []string{"+I[1, pa]", "+I[2, pb]"})
}
