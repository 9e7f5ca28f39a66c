package bills

import (
	"bufio"
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MySQLTotals reads the totals table (user_id, total_cents, bills) as a
// READ COMMITTED reader sees it: only committed XA transactions.
func MySQLTotals(db *sql.DB, table string) (map[int64]Total, error) {
	rows, err := db.Query("SELECT user_id, total_cents, bills FROM " + table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	got := map[int64]Total{}
	for rows.Next() {
		var u int64
		var t Total
		if err := rows.Scan(&u, &t.Cents, &t.Bills); err != nil {
			return nil, err
		}
		got[u] = t
	}
	return got, rows.Err()
}

// FileTotals replays the committed Debezium part files in dir (hidden,
// in-progress files skipped, as any reader of the directory does) into
// the totals table. Files are replayed in name order, which is not the
// order they were written in; that is fine because each user's events
// come from one sink subtask, which writes them in order into files
// whose sequence numbers increase: events are applied per user in
// (subtask, sequence) order.
func FileTotals(dir string) (map[int64]Total, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type part struct {
		name     string
		sub, seq int
	}
	var parts []part
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			continue
		}
		// part-<table>-<hash>-<p>-<subtask>-<seq>-<rand>.json
		f := strings.Split(strings.TrimSuffix(n, ".json"), "-")
		if len(f) < 7 {
			return nil, fmt.Errorf("unexpected file %s", n)
		}
		var p part
		p.name = n
		fmt.Sscan(f[len(f)-3], &p.sub)
		fmt.Sscan(f[len(f)-2], &p.seq)
		parts = append(parts, p)
	}
	// Order by sequence within a subtask; subtasks own disjoint users.
	slices.SortFunc(parts, func(a, b part) int {
		return cmp.Or(cmp.Compare(a.sub, b.sub), cmp.Compare(a.seq, b.seq))
	})
	got := map[int64]Total{}
	type row struct {
		UserID     int64 `json:"user_id"`
		TotalCents int64 `json:"total_cents"`
		Bills      int64 `json:"bills"`
	}
	for _, p := range parts {
		f, err := os.Open(filepath.Join(dir, p.name))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev struct {
				Before, After *row
				Op            string
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
			switch {
			case ev.Op == "c" && ev.After != nil:
				got[ev.After.UserID] = Total{ev.After.TotalCents, ev.After.Bills}
			case ev.Op == "d" && ev.Before != nil:
				if got[ev.Before.UserID] != (Total{ev.Before.TotalCents, ev.Before.Bills}) {
					f.Close()
					return nil, fmt.Errorf("%s: retraction of user %d's %+v, but the table holds %+v", p.name, ev.Before.UserID, *ev.Before, got[ev.Before.UserID])
				}
				delete(got, ev.Before.UserID)
			default:
				f.Close()
				return nil, fmt.Errorf("%s: malformed event %s", p.name, sc.Text())
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return got, nil
}
