package repl

import (
	"bytes"
	"strings"
	"testing"
)

func TestSubstitute(t *testing.T) {
	vars := Vars{}
	for _, kv := range []string{"bootstrap=127.0.0.1:9092", "dir.ckpt=/tmp/x y"} {
		if err := vars.Set(kv); err != nil {
			t.Fatal(err)
		}
	}
	var warn bytes.Buffer
	got := Substitute("a='${bootstrap}', b='${dir.ckpt}', c='${missing}', d='${missing}', e='$bootstrap'", vars, &warn, "job.sql")
	want := "a='127.0.0.1:9092', b='/tmp/x y', c='${missing}', d='${missing}', e='$bootstrap'"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if w := warn.String(); strings.Count(w, "${missing}") != 1 || !strings.Contains(w, "job.sql") {
		t.Fatalf("warnings %q, want one naming ${missing} and the file", w)
	}
	if err := vars.Set("no equals"); err == nil {
		t.Fatal("--var without '=' accepted")
	}
	if err := vars.Set("1x=v"); err == nil {
		t.Fatal("--var with a bad name accepted")
	}
}
