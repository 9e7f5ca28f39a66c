package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

func session(t *testing.T, settings ...string) *engine.Session {
	t.Helper()
	s := engine.NewSession(io.Discard)
	stmts, err := parser.Parse(strings.Join(settings, "") + `CREATE TABLE gen (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5000');
CREATE TABLE sink (k INT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k, v FROM gen;`)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		if _, err := s.Execute(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, j := range s.Jobs() {
			j.Cancel()
			_ = j.Wait() // with checkpointing, until its directories are left alone
		}
	})
	// Wait until records have flowed, so the counters are not zero.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, out := s.Jobs()[0].Records(); out > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no records reached the sink in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

func get(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

func TestJobsJSON(t *testing.T) {
	s := session(t)
	srv := httptest.NewServer(Handler(s))
	defer srv.Close()

	code, ctype, body := get(t, srv.URL+"/jobs")
	if code != 200 || ctype != "application/json" {
		t.Fatalf("GET /jobs: %d %s", code, ctype)
	}
	var list struct{ Jobs []engine.JobInfo }
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	if len(list.Jobs) != 1 || list.Jobs[0].ID != "job-1" || list.Jobs[0].Status != "RUNNING" {
		t.Fatalf("jobs: %+v", list.Jobs)
	}

	code, _, body = get(t, srv.URL+"/jobs/job-1")
	if code != 200 {
		t.Fatalf("GET /jobs/job-1: %d %s", code, body)
	}
	// The raw JSON: the field names are part of the API.
	var raw map[string]any
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "status", "start_time", "records_in", "records_out", "operators", "checkpoints", "last_checkpoint"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("/jobs/job-1 lacks %q: %s", k, body)
		}
	}
	if cps, ok := raw["checkpoints"].([]any); !ok || len(cps) != 0 {
		t.Errorf("checkpoints should be an empty list, got %v", raw["checkpoints"])
	}
	var info engine.JobInfo
	if err := json.Unmarshal([]byte(body), &info); err != nil {
		t.Fatal(err)
	}
	var src, sink *engine.OperatorInfo
	for i, op := range info.Operators {
		if strings.HasPrefix(op.Name, "TableSourceScan(gen)") {
			src = &info.Operators[i]
		}
		if op.Name == "Sink(sink)" {
			sink = &info.Operators[i]
		}
	}
	if src == nil || sink == nil || src.RecordsOut == 0 || sink.RecordsIn == 0 {
		t.Fatalf("operators: %+v", info.Operators)
	}

	code, _, body = get(t, srv.URL+"/jobs/job-7")
	if code != 404 || !strings.Contains(body, "no job with id 'job-7'") {
		t.Fatalf("GET /jobs/job-7: %d %s", code, body)
	}
	resp, err := http.Post(srv.URL+"/jobs", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /jobs: %d", resp.StatusCode)
	}
}

func TestMetrics(t *testing.T) {
	s := session(t)
	srv := httptest.NewServer(Handler(s))
	defer srv.Close()
	code, ctype, body := get(t, srv.URL+"/metrics")
	if code != 200 || !strings.HasPrefix(ctype, "text/plain") {
		t.Fatalf("GET /metrics: %d %s", code, ctype)
	}
	counter := func(name, operator string) float64 {
		t.Helper()
		re := regexp.MustCompile(name + `\{job_id="job-1",job_name="insert-into-sink",operator="` + regexp.QuoteMeta(operator) + `",operator_id="\d+"\} (\S+)`)
		m := re.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no %s for %s in:\n%s", name, operator, body)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := counter("streamsql_operator_records_out_total", "TableSourceScan(gen)"); v <= 0 {
		t.Errorf("source records out %v", v)
	}
	if v := counter("streamsql_operator_records_in_total", "Sink(sink)"); v <= 0 {
		t.Errorf("sink records in %v", v)
	}
	for _, want := range []string{
		"# TYPE streamsql_operator_records_in_total counter",
		`streamsql_job_status{job_id="job-1",job_name="insert-into-sink",status="RUNNING"} 1`,
		`streamsql_job_status{job_id="job-1",job_name="insert-into-sink",status="FINISHED"} 0`,
		"streamsql_late_records_dropped_total 0",
		"streamsql_sink_commit_latency_seconds_count 0",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Process-wide instruments say what they measure.
	for _, name := range []string{"streamsql_sink_commit_latency_seconds", "streamsql_late_records_dropped_total"} {
		if !regexp.MustCompile(`# HELP `+name+` \S`).MatchString(body) || strings.Contains(body, "Always zero") {
			t.Errorf("the HELP of %s is missing or says it stays at zero", name)
		}
	}
	// A job without checkpointing has no checkpoint series.
	if strings.Contains(body, "streamsql_checkpoints_completed_total{") {
		t.Error("checkpoint series for a job without checkpointing")
	}
	// Counters grow between scrapes.
	before := counter("streamsql_operator_records_out_total", "TableSourceScan(gen)")
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, body = get(t, srv.URL+"/metrics")
		if counter("streamsql_operator_records_out_total", "TableSourceScan(gen)") > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the source counter did not grow in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"8081":             "127.0.0.1:8081",
		":8081":            "127.0.0.1:8081",
		"127.0.0.1:8081":   "127.0.0.1:8081",
		"0.0.0.0:9000":     "0.0.0.0:9000",
		"localhost:0":      "localhost:0",
		"[::1]:8081":       "[::1]:8081",
		" 8081 ":           "127.0.0.1:8081",
		"127.0.0.1":        "",
		"host:port":        "",
		"":                 "",
		"127.0.0.1:999999": "",
	} {
		got, err := ListenAddr(in)
		if want == "" {
			if err == nil {
				t.Errorf("ListenAddr(%q) = %q, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// A real listener on loopback, as --http starts it.
func TestStart(t *testing.T) {
	s := engine.NewSession(io.Discard)
	srv, err := Start(":0", s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("a bare port must bind to loopback, got %s", srv.URL())
	}
	code, _, body := get(t, srv.URL()+"/jobs")
	if code != 200 || strings.TrimSpace(body) != "{\n  \"jobs\": []\n}" {
		t.Fatalf("GET /jobs with no job: %d %q", code, body)
	}
}

// With checkpointing, /metrics and /jobs/{id} carry the job's checkpoints.
func TestCheckpointMetrics(t *testing.T) {
	s := session(t, "SET 'execution.checkpointing.interval' = '100 ms';", "SET 'state.checkpoints.dir' = '"+t.TempDir()+"';")
	srv := httptest.NewServer(Handler(s))
	defer srv.Close()
	completed := regexp.MustCompile(`streamsql_checkpoints_completed_total\{job_id="job-1",job_name="insert-into-sink"\} ([1-9]\d*)`)
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, body = get(t, srv.URL+"/metrics")
		if completed.MatchString(body) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed checkpoint in /metrics:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		`streamsql_checkpoint_failures_total{job_id="job-1",job_name="insert-into-sink"} 0`,
		`streamsql_checkpoint_last_duration_seconds{job_id="job-1",job_name="insert-into-sink"} `,
		`streamsql_checkpoint_last_size_bytes{job_id="job-1",job_name="insert-into-sink"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	_, _, js := get(t, srv.URL+"/jobs/job-1")
	var info engine.JobInfo
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatal(err)
	}
	if !info.Checkpointing || info.CheckpointsCompleted < 1 || len(info.Checkpoints) != 1 || info.LastCheckpoint == nil || info.LastCheckpoint.Status != "COMPLETED" {
		t.Fatalf("/jobs/job-1: %s", js)
	}
}

// request sends GET url with a Host header and headers, and returns the
// status.
func request(t *testing.T, url, host string, hdr ...string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A page that rebinds its own name to 127.0.0.1 sends that name as Host:
// refused. The names of the bound address are accepted.
func TestHostMustNameTheBoundAddress(t *testing.T) {
	srv, err := Start("127.0.0.1:0", engine.NewSession(io.Discard), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port := srv.URL()[strings.LastIndexByte(srv.URL(), ':'):]
	for host, want := range map[string]int{
		"":                       200, // the URL's own: 127.0.0.1:port
		"localhost" + port:       200,
		"[::1]" + port:           200,
		"evil.example" + port:    421,
		"evil.example":           421,
		"10.0.0.1" + port:        421,
		"127.0.0.1.evil.example": 421,
	} {
		for _, path := range []string{"/jobs", "/metrics", "/"} {
			if got := request(t, srv.URL()+path, host); got != want {
				t.Errorf("GET %s with Host %q: %d, want %d", path, host, got, want)
			}
		}
	}
	if w := srv.Warning(); w != "" {
		t.Errorf("loopback warned: %s", w)
	}
}

func TestHostAllowed(t *testing.T) {
	for _, c := range []struct {
		host, bound string
		ok          bool
	}{
		{"127.0.0.1:8081", "127.0.0.1", true},
		{"localhost:8081", "127.0.0.1", true},
		{"rebound.example:8081", "127.0.0.1", false},
		{"10.1.2.3:8081", "10.1.2.3", true},
		{"localhost:8081", "10.1.2.3", false},
		{"10.9.9.9:8081", "0.0.0.0", true},
		{"[fe80::1]:8081", "::", true},
		{"rebound.example:8081", "0.0.0.0", false},
		{"jobs.corp.example:8081", "jobs.corp.example", true},
		{"JOBS.corp.example.:8081", "jobs.corp.example", true},
		{"", "127.0.0.1", false},
	} {
		if got := hostAllowed(c.host, c.bound); got != c.ok {
			t.Errorf("hostAllowed(%q, %q) = %v", c.host, c.bound, got)
		}
	}
}

// With a token, every request needs it.
func TestBearerToken(t *testing.T) {
	const token = "tok-3f9a"
	srv, err := Start("127.0.0.1:0", engine.NewSession(io.Discard), Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, path := range []string{"/", "/jobs", "/jobs/job-1", "/metrics"} {
		for _, c := range []struct {
			hdr  []string
			want int
		}{
			{nil, 401},
			{[]string{"Authorization", "Bearer wrong"}, 401},
			{[]string{"Authorization", token}, 401},
			{[]string{"Authorization", "Basic " + token}, 401},
			{[]string{"Authorization", "Bearer " + token}, 200},
		} {
			want := c.want
			if want == 200 && path == "/jobs/job-1" {
				want = 404 // no such job, but authorized
			}
			if got := request(t, srv.URL()+path, "", c.hdr...); got != want {
				t.Errorf("GET %s %v: %d, want %d", path, c.hdr, got, want)
			}
		}
	}
	// The rebinding check comes first: the token does not open it.
	if got := request(t, srv.URL()+"/jobs", "evil.example", "Authorization", "Bearer "+token); got != 421 {
		t.Errorf("rebound host with the token: %d", got)
	}
}

// An address beyond loopback is warned about.
func TestWarningBeyondLoopback(t *testing.T) {
	srv, err := Start("0.0.0.0:0", engine.NewSession(io.Discard), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if w := srv.Warning(); !strings.Contains(w, "beyond this machine") || !strings.Contains(w, "--http-token") {
		t.Fatalf("warning: %q", w)
	}
}
