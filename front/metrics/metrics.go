// Package metrics exports what pmjq and serve workers do as Prometheus
// metrics (github.com/prometheus/client_golang), on --metrics ADDR.
//
// Metrics is a jobs.Observer: the engine tells it of claims, completions,
// failures and take-backs, and it counts them. The tokens and claims of
// each place are not counted but read from the folders at the moment of
// each scrape (place.Inspect), so they are right even for work done by
// other processes and hosts on the same folders.
//
// Names follow Prometheus' conventions: a tpipe_ prefix, base units,
// counters ending in _total. Each Metrics has its own registry, owned by
// the command that made it; nothing is registered globally.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/place"
)

// Metrics counts a worker's jobs. It is safe for concurrent use.
type Metrics struct {
	reg       *prometheus.Registry
	claimed   *prometheus.CounterVec
	done      *prometheus.CounterVec
	failed    *prometheus.CounterVec
	retried   *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	takenBack *prometheus.CounterVec
	putBack   *prometheus.CounterVec
}

var _ jobs.Observer = (*Metrics)(nil)

// New returns Metrics whose registry also reports the tokens and claims
// of the places at dirs, read at each scrape. A place named twice (the
// output of one stage is the input of the next) is reported once.
func New(dirs []string) *Metrics { return NewWith(dirs, FolderCounts) }

// PlaceCounts are what one place holds at a scrape.
type PlaceCounts struct {
	Tokens int // ready
	Claims int // taken by a worker
	Aside  int // moved aside as bad, or failed
}

// Inspector reads a place's counts at a scrape: FolderCounts for a
// folder, another for a place of another backend (NATS).
type Inspector func(place string) (PlaceCounts, error)

// FolderCounts reads the counts of the folder dir (place.Inspect).
func FolderCounts(dir string) (PlaceCounts, error) {
	m, err := place.Inspect(dir)
	if err != nil {
		return PlaceCounts{}, err
	}
	held := 0
	for _, h := range m.Holders {
		held += len(h.Claims) + len(h.Locks)
	}
	return PlaceCounts{Tokens: m.Tokens, Claims: held, Aside: m.Aside}, nil
}

// NewWith is New for places that inspect reads.
func NewWith(dirs []string, inspect Inspector) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		claimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tpipe_jobs_claimed_total", Help: "Jobs a worker of the stage took.",
		}, []string{"stage"}),
		done: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tpipe_jobs_done_total", Help: "Jobs whose outputs were committed and inputs removed.",
		}, []string{"stage"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tpipe_jobs_failed_total", Help: "Jobs that failed for good: moved to a failed place or left in place.",
		}, []string{"stage"}),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tpipe_jobs_retried_total", Help: "Failures given back to be run again.",
		}, []string{"stage"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tpipe_job_duration_seconds",
			Help:    "Time from a job's claim to its delivery.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms .. about 4m
		}, []string{"stage"}),
		takenBack: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tpipe_claims_taken_back_total", Help: "Claims of dead or expired owners given back to ready.",
		}, []string{"place"}),
		putBack: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tpipe_jobs_put_back_total", Help: "Jobs whose input changed while they ran (still being written), put back to be done again.",
		}, []string{"stage"}),
	}
	m.reg.MustRegister(m.claimed, m.done, m.failed, m.retried, m.latency, m.takenBack, m.putBack, &places{dirs: distinct(dirs), inspect: inspect})
	return m
}

// Declare makes each counter of each stage a series at 0 before its first
// event, so that a dashboard sees 0, not nothing.
func (m *Metrics) Declare(stages ...string) {
	for _, st := range stages {
		for _, c := range []*prometheus.CounterVec{m.claimed, m.done, m.failed, m.retried, m.putBack} {
			c.WithLabelValues(st)
		}
	}
}

// Registry returns the registry that holds the metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Claimed counts a claim.
func (m *Metrics) Claimed(stage, job string) { m.claimed.WithLabelValues(stage).Inc() }

// Done counts a delivery and its latency.
func (m *Metrics) Done(stage, job string, d time.Duration) {
	m.done.WithLabelValues(stage).Inc()
	m.latency.WithLabelValues(stage).Observe(d.Seconds())
}

// Failed counts a failure, as retried or failed for good.
func (m *Metrics) Failed(stage, job string, status int, retry bool) {
	if retry {
		m.retried.WithLabelValues(stage).Inc()
	} else {
		m.failed.WithLabelValues(stage).Inc()
	}
}

// TakenBack counts claims given back.
func (m *Metrics) TakenBack(dir string, n int) { m.takenBack.WithLabelValues(dir).Add(float64(n)) }

// PutBack counts a job put back because its input changed under it.
func (m *Metrics) PutBack(stage, job string) { m.putBack.WithLabelValues(stage).Inc() }

// places is a collector that reads the places' folders at scrape time.
type places struct {
	dirs    []string
	inspect Inspector
}

var (
	tokensDesc = prometheus.NewDesc("tpipe_place_tokens", "Ready tokens (files) in the place.", []string{"place"}, nil)
	claimsDesc = prometheus.NewDesc("tpipe_place_claims", "Tokens of the place claimed or locked by a worker.", []string{"place"}, nil)
	failedDesc = prometheus.NewDesc("tpipe_place_aside_tokens", "Tokens of the place moved aside as bad.", []string{"place"}, nil)
)

// distinct returns dirs cleaned, each once, in their first order: a
// collector that reports a label set twice fails the whole scrape.
func distinct(dirs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		if !strings.Contains(d, "://") {
			d = filepath.Clean(d)
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func (p *places) Describe(ch chan<- *prometheus.Desc) {
	ch <- tokensDesc
	ch <- claimsDesc
	ch <- failedDesc
}

func (p *places) Collect(ch chan<- prometheus.Metric) {
	for _, dir := range p.dirs {
		m, err := p.inspect(dir)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(tokensDesc, err)
			continue
		}
		ch <- prometheus.MustNewConstMetric(tokensDesc, prometheus.GaugeValue, float64(m.Tokens), dir)
		ch <- prometheus.MustNewConstMetric(claimsDesc, prometheus.GaugeValue, float64(m.Claims), dir)
		ch <- prometheus.MustNewConstMetric(failedDesc, prometheus.GaugeValue, float64(m.Aside), dir)
	}
}

// Server serves Metrics over HTTP at /metrics. Close stops it and waits
// for its goroutine.
type Server struct {
	*Metrics
	ln   net.Listener
	srv  *http.Server
	wg   sync.WaitGroup
	once sync.Once
}

// Listen is the constructor behind --metrics ADDR: it listens on addr
// (host:port; port 0 picks one, see Addr) and serves New(dirs) at
// /metrics until Close.
func Listen(addr string, dirs []string) (*Server, error) {
	return ListenWith(addr, dirs, FolderCounts)
}

// ListenWith is Listen for places that inspect reads.
func ListenWith(addr string, dirs []string, inspect Inspector) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Metrics: NewWith(dirs, inspect), ln: ln}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.Handler())
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.srv.Serve(ln) // returns ErrServerClosed after Close
	}()
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting scrapes in progress finish for up to a
// second, and waits for it.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = s.srv.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = s.srv.Close()
		}
		s.wg.Wait()
	})
	return err
}
