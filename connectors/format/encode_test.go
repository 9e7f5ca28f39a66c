package format

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

func encodeCols(t *testing.T) []connectors.Column {
	var cs []connectors.Column
	for i, s := range []string{"BOOLEAN", "INT", "BIGINT", "DOUBLE", "DECIMAL(10, 2)", "STRING", "DATE", "TIMESTAMP(3)"} {
		ty, err := types.ParseType(s)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, connectors.Column{Name: string(rune('a'+i)) + "\"x", Type: ty})
	}
	return cs
}

var tricky = []string{"", "plain", "with,comma", `with "quotes"`, "line\nbreak", "tab\there", " padded ", "ünïcødé", "\x01ctl", "back\\slash"}

func randomRow(r *rand.Rand) types.Row {
	row := make(types.Row, 8)
	d := apd.New(r.Int63n(2000000)-1000000, -2)
	vals := []types.Value{
		types.NewBool(r.Intn(2) == 0),
		types.NewInt(int64(r.Int31()) - 1<<30),
		types.NewInt(r.Int63() - 1<<62),
		types.NewFloat(r.NormFloat64() * 1e6),
		types.NewDecimal(d),
		types.NewString(tricky[r.Intn(len(tricky))]),
		types.NewDate(int64(r.Intn(40000))),
		types.NewTimestamp((r.Int63n(4e12)) * int64(time.Millisecond)),
	}
	for i := range row {
		if r.Intn(6) == 0 && i != 5 { // an empty CSV field is "" for STRING, so no NULL there
			row[i] = types.Value{}
		} else {
			row[i] = vals[i]
		}
	}
	return row
}

// Rows written by the encoders read back, through the decoders, as the
// same rows; the JSON text is also checked by encoding/json.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	cs := encodeCols(t)
	r := rand.New(rand.NewSource(1))
	je, jd := NewJSONEncoder(cs), NewJSONDecoder(cs, nil, JSONOptions{})
	ce, cd := NewCSVEncoder(cs, DefaultCSVOptions()), NewCSVDecoder(cs, nil, DefaultCSVOptions())
	for i := 0; i < 5000; i++ {
		row := randomRow(r)
		jb := je.Append(nil, row)
		var m map[string]any
		if err := json.Unmarshal(jb, &m); err != nil {
			t.Fatalf("encoding/json rejects %s: %v", jb, err)
		}
		if s, ok := m[cs[5].Name].(string); !ok || s != row[5].Str() {
			t.Fatalf("encoding/json reads string %q from %s, want %q", m[cs[5].Name], jb, row[5].Str())
		}
		for name, enc := range map[string][]byte{"json": jb, "csv": ce.Append(nil, row)} {
			dec := Decoder(jd)
			if name == "csv" {
				dec = cd
			}
			got := make(types.Row, len(cs))
			if err := dec.Decode(enc, got); err != nil {
				t.Fatalf("%s: decoding %q: %v", name, enc, err)
			}
			for c := range row {
				if types.CompareRows(types.Row{row[c]}, types.Row{got[c]}) != 0 {
					if row[c].Kind() == types.KindFloat && !got[c].IsNull() && abs(row[c].Float()-got[c].Float()) == 0 {
						continue
					}
					t.Fatalf("%s: column %s: wrote %v, read %v back from %q", name, cs[c].Name, row[c], got[c], enc)
				}
			}
		}
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// Hand-written expectations for the exact text.
func TestEncodeText(t *testing.T) {
	cs := encodeCols(t)
	row := types.Row{types.NewBool(true), types.NewInt(7), types.Value{}, types.NewFloat(1.5), types.NewDecimal(apd.New(1234, -2)),
		types.NewString("a,\"b\""), types.NewDate(1), types.NewTimestamp(int64(1500 * time.Millisecond))}
	j := string(NewJSONEncoder(cs).Append(nil, row))
	want := `{"a\"x":true,"b\"x":7,"c\"x":null,"d\"x":1.5,"e\"x":12.34,"f\"x":"a,\"b\"","g\"x":"1970-01-02","h\"x":"1970-01-01 00:00:01.500"}`
	if j != want {
		t.Fatalf("json:\n got %s\nwant %s", j, want)
	}
	c := string(NewCSVEncoder(cs, DefaultCSVOptions()).Append(nil, row))
	if wantC := `true,7,,1.5,12.34,"a,""b""",1970-01-02,1970-01-01 00:00:01.500`; c != wantC {
		t.Fatalf("csv:\n got %s\nwant %s", c, wantC)
	}
	if strings.Contains(c, "\n") {
		t.Fatal("a record holds a line break")
	}
}
