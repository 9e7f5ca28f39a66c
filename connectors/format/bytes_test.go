package format

import (
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// BYTES columns are base64 text in json and csv, as Flink writes them:
// 00 ff 41 -> 000000 001111 111101 000001 = "AP9B" (worked out by hand).
func TestBytesBase64(t *testing.T) {
	cols := []connectors.Column{{Name: "b", Type: types.TypeBytes}, {Name: "s", Type: types.TypeString}}
	row := types.Row{types.NewBytes([]byte{0x00, 0xff, 0x41}), types.NewString("x")}

	js := string(NewJSONEncoder(cols).Append(nil, row))
	if want := `{"b":"AP9B","s":"x"}`; js != want {
		t.Errorf("json: %s, want %s", js, want)
	}
	cs := string(NewCSVEncoder(cols, DefaultCSVOptions()).Append(nil, row))
	if want := `AP9B,x`; cs != want {
		t.Errorf("csv: %s, want %s", cs, want)
	}

	got := make(types.Row, 2)
	if err := NewJSONDecoder(cols, nil, JSONOptions{}).Decode([]byte(`{"b":"AP9B","s":"x"}`), got); err != nil {
		t.Fatal(err)
	}
	if got[0].Str() != "\x00\xffA" {
		t.Errorf("json decode: %q", got[0].Str())
	}
	got = make(types.Row, 2)
	co, err := ParseCSVOptions(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if err := NewCSVDecoder(cols, nil, co).Decode([]byte(`AP9B,x`), got); err != nil {
		t.Fatal(err)
	}
	if got[0].Str() != "\x00\xffA" {
		t.Errorf("csv decode: %q", got[0].Str())
	}
	err = NewJSONDecoder(cols, nil, JSONOptions{}).Decode([]byte(`{"b":"not base64!","s":"x"}`), make(types.Row, 2))
	if err == nil || err.Error() != "column 'b': 'not base64!' is not base64" {
		t.Errorf("malformed base64: %v", err)
	}
}
