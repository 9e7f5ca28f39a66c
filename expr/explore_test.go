package expr

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

func dump(n any, ind string) string {
	var sb strings.Builder
	switch x := n.(type) {
	case *test_driver.ValueExpr:
		fmt.Fprintf(&sb, "%sValue kind=%d val=%#v tp=%s flag=%d flen=%d dec=%d\n", ind, x.Kind(), x.GetValue(), x.Type.String(), x.Type.GetFlag(), x.Type.GetFlen(), x.Type.GetDecimal())
	case *ast.FuncCallExpr:
		fmt.Fprintf(&sb, "%sFuncCall %s tp=%d\n", ind, x.FnName.O, x.Tp)
		for _, a := range x.Args {
			sb.WriteString(dump(a, ind+"  "))
		}
	case *ast.BinaryOperationExpr:
		fmt.Fprintf(&sb, "%sBinOp %s\n", ind, x.Op)
		sb.WriteString(dump(x.L, ind+"  "))
		sb.WriteString(dump(x.R, ind+"  "))
	case *ast.UnaryOperationExpr:
		fmt.Fprintf(&sb, "%sUnary %s\n", ind, x.Op)
		sb.WriteString(dump(x.V, ind+"  "))
	case *ast.FuncCastExpr:
		fmt.Fprintf(&sb, "%sCast %s tp=%d fl=%d dec=%d ft=%d\n", ind, x.Tp.String(), x.Tp.GetType(), x.Tp.GetFlen(), x.Tp.GetDecimal(), x.FunctionType)
		sb.WriteString(dump(x.Expr, ind+"  "))
	case *ast.TimeUnitExpr:
		fmt.Fprintf(&sb, "%sTimeUnit %s\n", ind, x.Unit)
	case *ast.TrimDirectionExpr:
		fmt.Fprintf(&sb, "%sTrimDir %s\n", ind, x.Direction)
	case *ast.ParenthesesExpr:
		fmt.Fprintf(&sb, "%sParen\n", ind)
		sb.WriteString(dump(x.Expr, ind+"  "))
	default:
		fmt.Fprintf(&sb, "%s%s %+v\n", ind, reflect.TypeOf(n), n)
	}
	return sb.String()
}

func TestExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	p := parser.New()
	for _, s := range strings.Split(os.Getenv("EXPLORE"), ";;") {
		st, err := p.ParseOneStmt("SELECT "+s+" FROM t", "", "")
		if err != nil {
			fmt.Println(s, "ERR", err)
			continue
		}
		f := st.(*ast.SelectStmt).Fields.Fields[0]
		fmt.Printf("== %s\n%s", s, dump(f.Expr, "  "))
	}
}
