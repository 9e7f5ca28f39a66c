package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

// Run starts the interactive client on the terminal. It returns when the
// user types Ctrl-D on an empty line or EXIT/QUIT. Ctrl-C cancels the
// running query and returns to the prompt; it never exits.
func Run(s *engine.Session, out, errOut io.Writer) error {
	home, _ := os.UserHomeDir()
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          "streamsql> ",
		HistoryFile:     filepath.Join(home, ".streamsql_history"),
		InterruptPrompt: "^C",
		EOFPrompt:       "exit",
		AutoComplete:    completer{s},
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	if home != "" {
		_ = os.Chmod(filepath.Join(home, ".streamsql_history"), 0o600)
	}
	fmt.Fprintln(out, "streamsql — type HELP; for help, Ctrl-D to exit.")
	var buf strings.Builder
	for {
		if buf.Len() == 0 {
			rl.SetPrompt("streamsql> ")
		} else {
			rl.SetPrompt("     -> ")
		}
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			continue
		}
		if errors.Is(err, io.EOF) {
			if buf.Len() == 0 {
				return nil
			}
			buf.Reset()
			continue
		}
		if err != nil {
			return err
		}
		if buf.Len() == 0 {
			switch strings.ToUpper(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ";"))) {
			case "EXIT", "QUIT":
				return nil
			case "":
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteString("\n")
		if !Complete(buf.String()) {
			continue
		}
		sql := buf.String()
		buf.Reset()
		runInteractive(s, sql, out, errOut)
	}
}

// runInteractive runs the statements of one input with Ctrl-C bound to
// cancelling them.
func runInteractive(s *engine.Session, sql string, out, errOut io.Writer) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	stmts, perr := parser.Parse(sql)
	for _, st := range stmts {
		err := runOne(ctx, s, st, ScriptOptions{Out: out, Err: errOut, Detach: true})
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(errOut, "[INFO] query cancelled")
			return
		}
		if err != nil {
			fmt.Fprintf(errOut, "[ERROR] %v\n", err)
			return
		}
	}
	if perr != nil {
		fmt.Fprintf(errOut, "[ERROR] %v\n", perr)
	}
}

// Complete reports whether sql ends with a ';' outside quotes and
// comments, i.e. whether the statement is complete.
func Complete(sql string) bool {
	inQuote := byte(0)
	last := byte(0)
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case inQuote != 0:
			if c == '\\' && inQuote != '`' {
				i++
			} else if c == inQuote {
				inQuote = 0
			}
			continue
		case c == '\'' || c == '"' || c == '`':
			inQuote = c
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-', c == '#':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return false
			}
			i += end + 3
			continue
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			last = c
		}
	}
	return inQuote == 0 && last == ';'
}

var keywords = []string{"SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "INSERT INTO", "VALUES",
	"CREATE TABLE", "CREATE VIEW", "DROP TABLE", "DROP VIEW", "SHOW TABLES", "SHOW JOBS", "DESCRIBE", "EXPLAIN",
	"SET", "RESET", "HAVING", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL OUTER JOIN", "ON", "AS", "WITH", "UNION ALL",
	"DISTINCT", "COUNT", "SUM", "AVG", "MIN", "MAX", "ROW_NUMBER() OVER", "PARTITION BY", "WATERMARK FOR", "HELP", "STOP JOB"}

type completer struct{ s *engine.Session }

// Do completes the word before the cursor from keywords, table and
// column names.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	start := pos
	for start > 0 && (isWord(line[start-1])) {
		start--
	}
	word := strings.ToUpper(string(line[start:pos]))
	if word == "" {
		return nil, 0
	}
	var cands []string
	cands = append(cands, keywords...)
	cands = append(cands, c.s.Tables()...)
	cands = append(cands, c.s.Columns()...)
	var out [][]rune
	for _, k := range cands {
		if strings.HasPrefix(strings.ToUpper(k), word) {
			out = append(out, []rune(k[len(word):]))
		}
	}
	return out, len(word)
}

func isWord(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
