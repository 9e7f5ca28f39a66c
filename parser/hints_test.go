package parser

import (
	"slices"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// A hinted name keeps its parts (TablePath) and carries its options
// (TableHints); query hints are kept apart.
func TestHintedTableNames(t *testing.T) {
	stmts, err := Parse("SELECT /*+ SHUFFLE_HASH(x) */ a FROM cat.db.t /*+ OPTIONS('k'='v', 'k2' = 'w') */ AS x, db.u /*+ OPTIONS('k'='z') */, w")
	if err != nil {
		t.Fatal(err)
	}
	st := stmts[0]
	var names []*ast.TableName
	st.Node.Accept(&collectNames{&names})
	want := []struct {
		path []string
		keys []string
		vals []string
	}{
		{[]string{"cat", "db", "t"}, []string{"k", "k2"}, []string{"v", "w"}},
		{[]string{"db", "u"}, []string{"k"}, []string{"z"}},
		{[]string{"w"}, nil, nil},
	}
	if len(names) != len(want) {
		t.Fatalf("%d table names, want %d", len(names), len(want))
	}
	for i, tn := range names {
		if p := st.TablePath(tn); !slices.Equal(p, want[i].path) {
			t.Errorf("name %d: path %v, want %v", i, p, want[i].path)
		}
		var keys, vals []string
		for _, o := range st.TableHints(tn) {
			keys, vals = append(keys, o.Key), append(vals, o.Value)
		}
		if !slices.Equal(keys, want[i].keys) || !slices.Equal(vals, want[i].vals) {
			t.Errorf("name %d: options %v=%v, want %v=%v", i, keys, vals, want[i].keys, want[i].vals)
		}
	}
	if len(st.QueryHints) != 1 || st.QueryHints[0].Name != "SHUFFLE_HASH" || !slices.Equal(st.QueryHints[0].Values, []string{"x"}) {
		t.Errorf("query hints %+v", st.QueryHints)
	}
}

type collectNames struct{ names *[]*ast.TableName }

func (c *collectNames) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok {
		*c.names = append(*c.names, tn)
	}
	return n, false
}

func (c *collectNames) Leave(n ast.Node) (ast.Node, bool) { return n, true }
