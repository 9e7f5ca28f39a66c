// Package httpapi is streamsql's small HTTP endpoint, off unless the
// command line asks for it (--http): the session's jobs as JSON and
// Prometheus metrics.
//
//	GET /jobs        {"jobs": [JobInfo, ...]}
//	GET /jobs/{id}   JobInfo: status, records in and out per operator,
//	                 watermarks, checkpoint history
//	GET /metrics     Prometheus text format
//
// It only reads: jobs are started and stopped from SQL. Still, /jobs shows
// the jobs' SQL, so Start guards the endpoint (Guard): a request whose
// Host header does not name the bound address is refused, which stops a
// web page from reading it through DNS rebinding; and with a bearer
// token set (--http-token or STREAMSQL_HTTP_TOKEN) every request must
// carry it. An address beyond loopback is warned about (Server.Warning).
package httpapi

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/metrics"
)

// Jobs is what the endpoint reads: an *engine.Session.
type Jobs interface {
	Jobs() []*engine.Job
	Job(id string) *engine.Job
}

// Handler returns the endpoint's handler for the jobs of src.
func Handler(src Jobs) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&jobCollector{src: src},
	)
	reg.MustRegister(metrics.Collectors()...)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"endpoints": []string{"/jobs", "/jobs/{id}", "/metrics"}})
	})
	mux.HandleFunc("GET /jobs", func(w http.ResponseWriter, r *http.Request) {
		infos := []engine.JobInfo{}
		for _, j := range src.Jobs() {
			infos = append(infos, j.Info())
		}
		writeJSON(w, http.StatusOK, map[string]any{"jobs": infos})
	})
	mux.HandleFunc("GET /jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		j := src.Job(id)
		if j == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no job with id '%s'", id)})
			return
		}
		writeJSON(w, http.StatusOK, j.Info())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// ListenAddr completes the address given to --http: a bare port ("8081"
// or ":8081") binds to loopback, 127.0.0.1; "host:port" is kept.
func ListenAddr(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", errors.New("empty address; use e.g. 127.0.0.1:8081 or 8081")
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", addr), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %v; use e.g. 127.0.0.1:8081 or 8081", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("address %q: port %q is not a number", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server is a running endpoint.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	host string // as given to Start, completed by ListenAddr
}

// Options configure Start.
type Options struct {
	// Token, when set, must come with every request as
	// "Authorization: Bearer <token>". It is never logged or echoed.
	Token string
	// ErrLog receives serving errors.
	ErrLog io.Writer
}

// Start listens on addr (completed by ListenAddr) and serves the jobs of
// src, behind Guard, until Close.
func Start(addr string, src Jobs, o Options) (*Server, error) {
	full, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(full)
	ln, err := net.Listen("tcp", full)
	if err != nil {
		return nil, err
	}
	errLog := o.ErrLog
	if errLog == nil {
		errLog = io.Discard
	}
	s := &Server{ln: ln, host: host, srv: &http.Server{Handler: Guard(Handler(src), host, o.Token), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(errLog, "streamsql: http: %v\n", err)
		}
	}()
	return s, nil
}

// Warning is what to tell the user about an endpoint reachable from
// other machines, and "" for one on loopback.
func (s *Server) Warning() string {
	if isLoopback(s.host) {
		return ""
	}
	return fmt.Sprintf("the HTTP endpoint listens on %s, beyond this machine: whoever reaches it can read the jobs' SQL; "+
		"require a token with --http-token or STREAMSQL_HTTP_TOKEN, or bind to 127.0.0.1", s.ln.Addr())
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard refuses what the endpoint must not answer, before h sees it:
//
//   - a Host header that does not name the address the endpoint is bound
//     to (bound, the host part given to --http): 421. A page on another
//     site that rebinds its name to this machine sends its own name. On
//     loopback, localhost and the loopback addresses are accepted; on
//     all interfaces (0.0.0.0, ::), any IP address and localhost;
//   - with token set, a request without "Authorization: Bearer <token>": 401.
func Guard(h http.Handler, bound, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, bound) {
			writeJSON(w, http.StatusMisdirectedRequest, map[string]string{
				"error": "the Host header does not name this endpoint's address; use the address streamsql printed"})
			return
		}
		if token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="streamsql"`)
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "this endpoint needs its bearer token (Authorization: Bearer ...)"})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func hostAllowed(hostHeader, bound string) bool {
	h := hostHeader
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	if h == "" {
		return false
	}
	if strings.EqualFold(h, bound) {
		return true
	}
	ip, bip := net.ParseIP(h), net.ParseIP(bound)
	switch {
	case ip != nil && bip != nil && ip.Equal(bip):
		return true
	case isLoopback(bound):
		return isLoopback(h)
	case bip != nil && bip.IsUnspecified():
		return ip != nil || strings.EqualFold(h, "localhost")
	}
	return false
}

// URL is the endpoint's base URL, e.g. http://127.0.0.1:8081.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }

// jobCollector turns the jobs' counters into metrics at scrape time.
type jobCollector struct{ src Jobs }

var (
	opLabels      = []string{"job_id", "job_name", "operator_id", "operator"}
	descRecordsIn = prometheus.NewDesc("streamsql_operator_records_in_total",
		"Records received by an operator, summed over its parallel subtasks.", opLabels, nil)
	descRecordsOut = prometheus.NewDesc("streamsql_operator_records_out_total",
		"Records emitted by an operator, summed over its parallel subtasks.", opLabels, nil)
	descWatermark = prometheus.NewDesc("streamsql_operator_watermark_seconds",
		"The operator's current watermark (the lowest over its subtasks) as event time in seconds since the epoch; absent before the first watermark and after the end of input.", opLabels, nil)
	descLate = prometheus.NewDesc("streamsql_operator_late_records_dropped_total",
		"Rows an operator dropped for arriving behind the watermark (windows, OVER, window joins), summed over its parallel subtasks.", opLabels, nil)
	descSnapshot = prometheus.NewDesc("streamsql_operator_checkpoint_duration_seconds",
		"The longest time one of the operator's subtasks took for its part of the last checkpoint (aligned barrier to acknowledgement: operator snapshot and state store).", opLabels, nil)
	descStateSize = prometheus.NewDesc("streamsql_operator_state_size_bytes",
		"Size of the operator's state in the last checkpoint each of its subtasks took, summed over the subtasks (0 for an operator without state).", opLabels, nil)
	descStatus = prometheus.NewDesc("streamsql_job_status",
		"1 for the job's current status, 0 for the others.", []string{"job_id", "job_name", "status"}, nil)
	descStart = prometheus.NewDesc("streamsql_job_start_time_seconds",
		"When the job started, in seconds since the epoch.", jobLabels, nil)
	jobLabels     = []string{"job_id", "job_name"}
	descCompleted = prometheus.NewDesc("streamsql_checkpoints_completed_total",
		"Checkpoints the job completed (only jobs with checkpointing have this series).", jobLabels, nil)
	descFailures = prometheus.NewDesc("streamsql_checkpoint_failures_total",
		"Checkpoints of the job that failed or timed out (only jobs with checkpointing have this series).", jobLabels, nil)
	descCkptDuration = prometheus.NewDesc("streamsql_checkpoint_last_duration_seconds",
		"Time from triggering the job's last completed checkpoint to its completion.", jobLabels, nil)
	descCkptSize = prometheus.NewDesc("streamsql_checkpoint_last_size_bytes",
		"Total size of the job's last completed checkpoint.", jobLabels, nil)
)

var statuses = []string{engine.StatusRunning, engine.StatusFinished, engine.StatusCanceled, engine.StatusFailed}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRecordsIn, descRecordsOut, descWatermark, descLate, descSnapshot, descStateSize, descStatus, descStart,
		descCompleted, descFailures, descCkptDuration, descCkptSize} {
		ch <- d
	}
}

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	for _, j := range c.src.Jobs() {
		st := j.Status()
		for _, s := range statuses {
			v := 0.0
			if s == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descStatus, prometheus.GaugeValue, v, j.ID, j.Name, s)
		}
		ch <- prometheus.MustNewConstMetric(descStart, prometheus.GaugeValue, float64(j.Start.UnixNano())/1e9, j.ID, j.Name)
		if st, ok := j.CheckpointStats(); ok {
			ch <- prometheus.MustNewConstMetric(descCompleted, prometheus.CounterValue, float64(st.Completed), j.ID, j.Name)
			ch <- prometheus.MustNewConstMetric(descFailures, prometheus.CounterValue, float64(st.Failed), j.ID, j.Name)
			if st.LastID > 0 {
				ch <- prometheus.MustNewConstMetric(descCkptDuration, prometheus.GaugeValue, st.LastDuration.Seconds(), j.ID, j.Name)
				ch <- prometheus.MustNewConstMetric(descCkptSize, prometheus.GaugeValue, float64(st.LastTotalBytes), j.ID, j.Name)
			}
		}
		for _, m := range j.Metrics() {
			lv := []string{j.ID, j.Name, strconv.Itoa(m.ID), m.Name}
			ch <- prometheus.MustNewConstMetric(descRecordsIn, prometheus.CounterValue, float64(m.RecordsIn), lv...)
			ch <- prometheus.MustNewConstMetric(descRecordsOut, prometheus.CounterValue, float64(m.RecordsOut), lv...)
			ch <- prometheus.MustNewConstMetric(descLate, prometheus.CounterValue, float64(m.LateRecordsDropped), lv...)
			ch <- prometheus.MustNewConstMetric(descSnapshot, prometheus.GaugeValue, m.SnapshotDuration.Seconds(), lv...)
			ch <- prometheus.MustNewConstMetric(descStateSize, prometheus.GaugeValue, float64(m.StateBytes), lv...)
			if m.Watermark != dataflow.MinWatermark && m.Watermark != dataflow.MaxWatermark {
				ch <- prometheus.MustNewConstMetric(descWatermark, prometheus.GaugeValue, float64(m.Watermark)/1e9, lv...)
			}
		}
	}
}
