package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/engine"
	nexmarkq "github.com/streamsql/streamsql/examples/nexmark"
	"github.com/streamsql/streamsql/parser"
)

const benchUsage = `Usage: streamsql bench nexmark --query qN [--events N] [--parallelism P]

Runs a Nexmark query of examples/nexmark (built into the binary) over N
generated events and prints events/s, CPU seconds, events per CPU second,
peak RSS, the size of the checkpoint directory at the end, and the rows
the sink received. --query all (or a comma list) runs each query in a
process of its own, so that each peak RSS is the query's, and prints a
Markdown table.

--profile flink-reference sets the conditions of Flink's published
Nexmark figures (nexmark's flink-conf.yaml and sql-client-defaults.yaml),
except that checkpoints are taken every 10 s instead of every 3 min:
Pebble state, exactly-once incremental checkpoints every 10 s into a
temporary directory, mini-batch 2 s / 50,000 rows with two-phase
aggregation, and split distinct aggregation (1,024 buckets). --set
options apply after the profile's.

--compare key=value (repeatable) runs each query twice in a row, without
and with those options, for an A/B comparison taken under the same load.

--cpuprofile FILE writes a CPU profile of the run; --memprofile FILE
writes the in-use heap profile taken when the heap was largest (sampled
every second), for go tool pprof. Both apply to a single query only.

Flags:
`

// benchResult is one query's measurement; --json prints it for the
// parent process of --query all.
type benchResult struct {
	Query      string  `json:"query"`
	Events     int64   `json:"events"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
	OutputRows int64   `json:"output_rows"`
	// CheckpointMB is the size of the checkpoint directory at the end.
	CheckpointMB float64 `json:"checkpoint_mb"`
	Error        string  `json:"error,omitempty"`
}

// flinkReference is --profile flink-reference (see benchUsage).
var flinkReference = []string{
	"state.backend.type=pebble",
	"execution.checkpointing.interval=10s",
	"table.exec.mini-batch.enabled=true",
	"table.exec.mini-batch.allow-latency=2s",
	"table.exec.mini-batch.size=50000",
	"table.optimizer.agg-phase-strategy=AUTO",
	"table.optimizer.distinct-agg.split.enabled=true",
}

func (r benchResult) eventsPerSec() float64    { return float64(r.Events) / r.Seconds }
func (r benchResult) eventsPerCPUSec() float64 { return float64(r.Events) / r.CPUSeconds }

func runBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "nexmark" {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	fs := flag.NewFlagSet("streamsql bench nexmark", flag.ContinueOnError)
	fs.SetOutput(stderr)
	query := fs.String("query", "", "the query: q0 ... q22, a comma list, or all")
	events := fs.Int64("events", 10_000_000, "events to generate, of all kinds")
	par := fs.Int("parallelism", 1, "parallelism.default of the job")
	span := fs.Duration("span", 10*time.Second, "event time the events span ('first-event.rate' = events / span), 10 s as in the reference's published runs")
	asJSON := fs.Bool("json", false, "print one JSON object per query")
	profile := fs.String("profile", "", "a set of options: flink-reference")
	cpuProf := fs.String("cpuprofile", "", "write a CPU profile of the run to `file` (a single query only)")
	memProf := fs.String("memprofile", "", "write the heap profile taken at the largest heap of the run to `file` (a single query only)")
	var sets, compare setFlags
	fs.Var(&sets, "set", "set a session option, `key=value`; may be repeated")
	fs.Var(&compare, "compare", "also run each query with this option, `key=value`, added; may be repeated")
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *query == "" || *events <= 0 || *par < 1 || *span < time.Millisecond || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	switch *profile {
	case "":
	case "flink-reference":
		sets = append(append(setFlags{}, flinkReference...), sets...)
	default:
		fmt.Fprintf(stderr, "streamsql bench: unknown profile %q (known: flink-reference)\n", *profile)
		return 2
	}
	qs := strings.Split(*query, ",")
	if *query == "all" {
		qs = nexmarkq.Queries()
	}
	for _, q := range qs {
		if _, err := nexmarkq.Query(q); err != nil {
			fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
			return 2
		}
	}
	if (*cpuProf != "" || *memProf != "") && (len(qs) != 1 || len(compare) > 0) {
		fmt.Fprintln(stderr, "streamsql bench: --cpuprofile and --memprofile profile a single query, without --compare")
		return 2
	}
	if len(qs) == 1 && len(compare) == 0 {
		stop, err := startProfiles(*cpuProf, *memProf)
		if err != nil {
			fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
			return 1
		}
		r := benchQuery(qs[0], *events, *par, *span, sets)
		if err := stop(); err != nil {
			fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
			return 1
		}
		if *asJSON {
			b, _ := json.Marshal(r)
			fmt.Fprintln(stdout, string(b))
		} else {
			printBench(stdout, r)
		}
		if r.Error != "" {
			return 1
		}
		return 0
	}
	// Several queries: one child process each, so that peak RSS and the
	// heap a query leaves behind do not leak into the next.
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Nexmark, %d events per query over %s of event time, parallelism %d, GOMAXPROCS %d, options %v, %s\n\n",
		*events, *span, *par, runtime.GOMAXPROCS(0), []string(sets), time.Now().UTC().Format("2006-01-02"))
	variants := []setFlags{sets}
	if len(compare) > 0 {
		fmt.Fprintf(stdout, "A: those options; B: also %v, run right after A.\n\n", []string(compare))
		variants = append(variants, append(append(setFlags{}, sets...), compare...))
	}
	fmt.Fprintln(stdout, "| query | events/s | CPU s | events per CPU s | peak RSS MB | checkpoints MB | output rows |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|")
	failed := false
	for _, q := range qs {
		for vi, vsets := range variants {
			label := q
			if len(variants) > 1 {
				label += " " + string(rune('A'+vi))
			}
			args := []string{"bench", "nexmark", "--json", "--query", q,
				"--events", strconv.FormatInt(*events, 10), "--parallelism", strconv.Itoa(*par), "--span", span.String()}
			for _, kv := range vsets {
				args = append(args, "--set", kv)
			}
			cmd := exec.Command(self, args...)
			cmd.Stderr = stderr
			out, _ := cmd.Output()
			var r benchResult
			if err := json.Unmarshal(lastLine(out), &r); err != nil {
				r = benchResult{Query: q, Error: fmt.Sprintf("no result (%v)", err)}
			}
			if r.Error != "" {
				failed = true
				fmt.Fprintf(stdout, "| %s | failed: %s | | | | | |\n", label, r.Error)
				continue
			}
			fmt.Fprintf(stdout, "| %s | %s | %.1f | %s | %.0f | %.0f | %d |\n", label, thousands(r.eventsPerSec()),
				r.CPUSeconds, thousands(r.eventsPerCPUSec()), r.PeakRSSMB, r.CheckpointMB, r.OutputRows)
		}
	}
	if failed {
		return 1
	}
	return 0
}

func lastLine(b []byte) []byte {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return []byte(s)
}

func printBench(w io.Writer, r benchResult) {
	if r.Error != "" {
		fmt.Fprintf(w, "%s: failed: %s\n", r.Query, r.Error)
		return
	}
	fmt.Fprintf(w, "%s: %d events in %.2f s: %s events/s; CPU %.2f s (%s events per CPU second); peak RSS %.0f MB; checkpoints %.0f MB; %d output rows\n",
		r.Query, r.Events, r.Seconds, thousands(r.eventsPerSec()), r.CPUSeconds, thousands(r.eventsPerCPUSec()), r.PeakRSSMB, r.CheckpointMB, r.OutputRows)
}

func thousands(f float64) string {
	s := strconv.FormatInt(int64(f+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// benchQuery runs one query in this process and measures it from the
// INSERT's submission to the job's end.
func benchQuery(q string, events int64, par int, span time.Duration, sets []string) benchResult {
	r := benchResult{Query: q, Events: events}
	fail := func(err error) benchResult { r.Error = err.Error(); return r }
	text, err := nexmarkq.Query(q)
	if err != nil {
		return fail(err)
	}
	rate := float64(events) / span.Seconds()
	ddl, err := nexmarkq.Configure(events, strconv.FormatFloat(rate, 'f', -1, 64))
	if err != nil {
		return fail(err)
	}
	// q10 writes files: into a temporary directory, removed afterwards.
	if strings.Contains(text, "'path' = 'nexmark-q10'") {
		dir, err := os.MkdirTemp("", "nexmark-q10-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(dir)
		text = strings.ReplaceAll(text, "'path' = 'nexmark-q10'", "'path' = '"+dir+"'")
	}
	// q13 reads its side input from a file: written to a temporary directory.
	if strings.Contains(text, nexmarkq.SideInputPath) {
		dir, err := os.MkdirTemp("", "nexmark-q13-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(dir)
		p, err := nexmarkq.WriteSideInput(dir)
		if err != nil {
			return fail(err)
		}
		text = nexmarkq.WithSideInput(text, p)
	}
	s := engine.NewSession(io.Discard)
	if err := s.Conf.Set("parallelism.default", strconv.Itoa(par)); err != nil {
		return fail(err)
	}
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fail(fmt.Errorf("--set wants key=value, got %q", kv))
		}
		if err := s.Conf.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return fail(err)
		}
	}
	// Checkpoints without a directory go to a temporary one, measured at
	// the end and removed.
	ckptDir := s.Conf.Get("state.checkpoints.dir")
	if s.Conf.Duration("execution.checkpointing.interval") > 0 && ckptDir == "" {
		dir, err := os.MkdirTemp("", "nexmark-checkpoints-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(dir)
		if err := s.Conf.Set("state.checkpoints.dir", dir); err != nil {
			return fail(err)
		}
		ckptDir = dir
	}
	stmts, err := parser.Parse(ddl + "\n" + text)
	if err != nil {
		return fail(err)
	}
	var job *engine.Job
	var start time.Time
	var cpu0 float64
	for _, st := range stmts {
		if job == nil {
			start, cpu0 = time.Now(), cpuSeconds()
		}
		res, err := s.Execute(context.Background(), st)
		if err != nil {
			return fail(err)
		}
		if res.Job != nil {
			if job != nil {
				return fail(fmt.Errorf("%s starts more than one job", q))
			}
			job = res.Job
		}
	}
	if job == nil {
		return fail(fmt.Errorf("%s starts no job", q))
	}
	if err := job.Wait(); err != nil {
		return fail(err)
	}
	r.Seconds = time.Since(start).Seconds()
	r.CPUSeconds = cpuSeconds() - cpu0
	_, r.OutputRows = job.Records()
	r.PeakRSSMB = peakRSSMB()
	if ckptDir != "" {
		r.CheckpointMB = float64(dirBytes(ckptDir)) / (1 << 20)
	}
	return r
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
