package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// TableDef is a table's definition as DDL text parts. ALTER TABLE and
// CREATE TABLE ... LIKE work on it: they make a new definition from the
// table's, render it (DDL) and create the table from that text as from
// any CREATE TABLE, so every check of CREATE TABLE applies to the result.
type TableDef struct {
	Name      string // the table name, rendered
	Temporary bool
	Elements  []parser.TableElement
	Partition []string
	Options   []parser.Option
}

// Def returns the table's definition.
func (t *TableEntry) Def() TableDef {
	d := TableDef{Name: QuoteIdent(t.Name), Temporary: t.Temporary, Options: append([]parser.Option(nil), t.Options...)}
	if t.stmt != nil && len(t.stmt.Elements) > 0 {
		d.Elements = append(d.Elements, t.stmt.Elements...)
		d.Partition = append(d.Partition, t.stmt.PartitionKeys...)
		return d
	}
	// CREATE TABLE ... AS: the columns of its query.
	for _, c := range t.Conn.Columns {
		d.Elements = append(d.Elements, parser.TableElement{Kind: "column", Name: c.Name, Text: QuoteIdent(c.Name) + " " + c.Type.String()})
	}
	if len(t.Conn.PrimaryKey) > 0 {
		var ks []string
		for _, k := range t.Conn.PrimaryKey {
			ks = append(ks, QuoteIdent(t.Conn.Columns[k].Name))
		}
		d.Elements = append(d.Elements, parser.TableElement{Kind: "primary key", Text: "PRIMARY KEY (" + strings.Join(ks, ", ") + ") NOT ENFORCED"})
	}
	return d
}

// DDL renders the definition as a CREATE TABLE statement.
func (d TableDef) DDL() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if d.Temporary {
		b.WriteString("TEMPORARY ")
	}
	b.WriteString("TABLE " + d.Name + " (\n")
	for i, e := range d.Elements {
		b.WriteString("  " + e.Text)
		if i < len(d.Elements)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(")")
	if len(d.Partition) > 0 {
		var ps []string
		for _, p := range d.Partition {
			ps = append(ps, QuoteIdent(p))
		}
		b.WriteString(" PARTITIONED BY (" + strings.Join(ps, ", ") + ")")
	}
	b.WriteString(" WITH (\n")
	for i, o := range d.Options {
		fmt.Fprintf(&b, "  %s = %s", quoteLiteral(o.Key), quoteLiteral(o.Value))
		if i < len(d.Options)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(")")
	return b.String()
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// QuoteIdent quotes a name unless it is a plain word.
func QuoteIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

func (d *TableDef) find(kind, name string) int {
	for i, e := range d.Elements {
		if e.Kind == kind && (name == "" || strings.EqualFold(e.Name, name)) {
			return i
		}
	}
	return -1
}

// column finds a column of any kind (physical, computed, metadata).
func (d *TableDef) column(name string) int {
	for i, e := range d.Elements {
		if (e.Kind == "column" || e.Kind == "computed" || e.Kind == "metadata") && strings.EqualFold(e.Name, name) {
			return i
		}
	}
	return -1
}

func (d *TableDef) option(key string) int {
	for i, o := range d.Options {
		if o.Key == key {
			return i
		}
	}
	return -1
}

// likeFeature maps an element kind to the LIKE feature that governs it.
var likeFeature = map[string]string{"computed": "GENERATED", "metadata": "METADATA", "watermark": "WATERMARKS", "primary key": "CONSTRAINTS"}

// MergeLike makes the definition of CREATE TABLE new ... LIKE base
// (options), as Flink does: base's physical columns always come first;
// for each of its computed (GENERATED) and METADATA columns, WATERMARKS,
// CONSTRAINTS (the primary key), PARTITIONS and OPTIONS the options say
// INCLUDING (keep base's, a clash with new's is an error), EXCLUDING
// (drop base's) or OVERWRITING (new's replace base's of the same name).
// Without options: INCLUDING ALL OVERWRITING OPTIONS.
func MergeLike(base, nw TableDef, options [][2]string) (TableDef, error) {
	strategy := map[string]string{"CONSTRAINTS": "INCLUDING", "GENERATED": "INCLUDING", "METADATA": "INCLUDING",
		"OPTIONS": "OVERWRITING", "PARTITIONS": "INCLUDING", "WATERMARKS": "INCLUDING"}
	for _, o := range options {
		kind, feat := o[0], o[1]
		if kind == "OVERWRITING" && (feat == "ALL" || feat == "CONSTRAINTS" || feat == "PARTITIONS") {
			return TableDef{}, fmt.Errorf("LIKE option OVERWRITING %s is not allowed; %s takes INCLUDING or EXCLUDING", feat, feat)
		}
		if feat == "ALL" {
			for f := range strategy {
				strategy[f] = kind
			}
			continue
		}
		strategy[feat] = kind
	}
	out := TableDef{Name: nw.Name, Temporary: nw.Temporary}
	used := map[int]bool{} // new's elements placed over base's
	for _, e := range base.Elements {
		if e.Kind == "column" {
			if nw.column(e.Name) >= 0 {
				return TableDef{}, fmt.Errorf("column '%s' is defined in the base table of LIKE and again in the new table", e.Name)
			}
			out.Elements = append(out.Elements, e)
			continue
		}
		feat, ok := likeFeature[e.Kind]
		if !ok || strategy[feat] == "EXCLUDING" {
			continue
		}
		j := -1
		switch e.Kind {
		case "watermark":
			j = nw.find("watermark", e.Name)
		case "primary key":
			j = nw.find("primary key", "")
		default:
			j = nw.column(e.Name)
		}
		if j < 0 {
			out.Elements = append(out.Elements, e)
			continue
		}
		if strategy[feat] == "INCLUDING" {
			what := map[string]string{"watermark": "a WATERMARK for column '" + e.Name + "'", "primary key": "a PRIMARY KEY"}[e.Kind]
			if what == "" {
				what = "a column '" + e.Name + "'"
			}
			return TableDef{}, fmt.Errorf("the base table of LIKE already has %s; specify EXCLUDING %s or OVERWRITING %s", what, feat, feat)
		}
		out.Elements = append(out.Elements, nw.Elements[j]) // OVERWRITING
		used[j] = true
	}
	for j, e := range nw.Elements {
		if !used[j] {
			out.Elements = append(out.Elements, e)
		}
	}
	switch {
	case strategy["PARTITIONS"] == "INCLUDING" && len(base.Partition) > 0 && len(nw.Partition) > 0:
		return TableDef{}, fmt.Errorf("the base table of LIKE already has partitions; specify EXCLUDING PARTITIONS")
	case strategy["PARTITIONS"] == "INCLUDING" && len(base.Partition) > 0:
		out.Partition = base.Partition
	default:
		out.Partition = nw.Partition
	}
	if strategy["OPTIONS"] != "EXCLUDING" {
		out.Options = append(out.Options, base.Options...)
	}
	for _, o := range nw.Options {
		if i := out.option(o.Key); i >= 0 {
			if strategy["OPTIONS"] == "INCLUDING" {
				return TableDef{}, fmt.Errorf("the base table of LIKE already has the option '%s'; specify EXCLUDING OPTIONS or OVERWRITING OPTIONS", o.Key)
			}
			out.Options[i] = o
			continue
		}
		out.Options = append(out.Options, o)
	}
	return out, nil
}

// Alter applies ALTER TABLE (other than RENAME TO) to the definition.
func (d TableDef) Alter(a *parser.AlterTable, options []parser.Option) (TableDef, error) {
	out := d
	out.Elements = append([]parser.TableElement(nil), d.Elements...)
	out.Options = append([]parser.Option(nil), d.Options...)
	switch a.Op {
	case "SET":
		for _, o := range options {
			if i := out.option(o.Key); i >= 0 {
				out.Options[i] = o
			} else {
				out.Options = append(out.Options, o)
			}
		}
	case "RESET":
		for _, k := range a.Reset {
			if k == "connector" {
				return d, fmt.Errorf("option 'connector' cannot be reset")
			}
			if i := out.option(k); i >= 0 {
				out.Options = append(out.Options[:i], out.Options[i+1:]...)
			}
		}
	case "ADD", "MODIFY":
		last := -1 // where FIRST/AFTER put the previous element: the next goes after it
		for _, e := range a.Elements {
			i := -1
			switch e.Kind {
			case "watermark":
				i = out.find("watermark", "")
			case "primary key":
				i = out.find("primary key", "")
			case "constraint":
				return d, fmt.Errorf("only PRIMARY KEY constraints are supported")
			default:
				i = out.column(e.Name)
			}
			if a.Op == "ADD" && i >= 0 {
				return d, fmt.Errorf("%s already exists; use ALTER TABLE ... MODIFY", describeElement(e))
			}
			if a.Op == "MODIFY" && i < 0 {
				return d, fmt.Errorf("%s does not exist; use ALTER TABLE ... ADD", describeElement(e))
			}
			if i >= 0 && !a.First && a.After == "" {
				out.Elements[i] = e
				continue
			}
			if i >= 0 {
				out.Elements = append(out.Elements[:i], out.Elements[i+1:]...)
			}
			at := len(out.Elements)
			if last >= 0 {
				at = last + 1
			} else if a.First {
				at = 0
			} else if a.After != "" {
				k := out.column(a.After)
				if k < 0 {
					return d, fmt.Errorf("AFTER: column '%s' does not exist", a.After)
				}
				at = k + 1
			}
			out.Elements = append(out.Elements[:at], append([]parser.TableElement{e}, out.Elements[at:]...)...)
			last = at
		}
	case "DROP":
		switch {
		case a.DropPK:
			i := out.find("primary key", "")
			if i < 0 {
				return d, fmt.Errorf("the table has no PRIMARY KEY")
			}
			out.Elements = append(out.Elements[:i], out.Elements[i+1:]...)
		case a.DropWM:
			i := out.find("watermark", "")
			if i < 0 {
				return d, fmt.Errorf("the table has no WATERMARK")
			}
			out.Elements = append(out.Elements[:i], out.Elements[i+1:]...)
		}
		for _, name := range a.Drop {
			i := out.column(name)
			if i < 0 {
				return d, fmt.Errorf("column '%s' does not exist", name)
			}
			if w := out.find("watermark", name); w >= 0 {
				return d, fmt.Errorf("column '%s' is the rowtime of the WATERMARK; drop the watermark first", name)
			}
			out.Elements = append(out.Elements[:i], out.Elements[i+1:]...)
		}
	case "RENAME COLUMN":
		i := out.column(a.From)
		if i < 0 {
			return d, fmt.Errorf("column '%s' does not exist", a.From)
		}
		if out.column(a.To) >= 0 {
			return d, fmt.Errorf("column '%s' already exists", a.To)
		}
		e := out.Elements[i]
		rest := strings.TrimLeft(e.Text, " ")
		// The element starts with its name, as written (maybe quoted).
		if strings.HasPrefix(rest, "`") {
			if k := strings.Index(rest[1:], "`"); k >= 0 {
				rest = rest[k+2:]
			}
		} else if k := strings.IndexAny(rest, " \t\n"); k >= 0 {
			rest = rest[k:]
		}
		e.Name, e.Text = a.To, QuoteIdent(a.To)+rest
		out.Elements[i] = e
	default:
		return d, fmt.Errorf("ALTER TABLE ... %s is not supported", a.Op)
	}
	return out, nil
}

func describeElement(e parser.TableElement) string {
	switch e.Kind {
	case "watermark":
		return "the WATERMARK"
	case "primary key":
		return "the PRIMARY KEY"
	}
	return "column '" + e.Name + "'"
}
