package metrics

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/place"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestScrape serves metrics on a real listener on 127.0.0.1 and scrapes
// them over HTTP, as Prometheus would.
func TestScrape(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in")
	w, err := place.NewWorker(place.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p, err := w.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(in, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Claim("c"); err != nil {
		t.Fatal(err)
	}
	s, err := Listen("127.0.0.1:0", []string{in})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var o jobs.Observer = jobs.Observers{s.Metrics}
	o.Claimed("md5sum", "a")
	o.Done("md5sum", "a", 30*time.Millisecond)
	o.Claimed("md5sum", "b")
	o.Failed("md5sum", "b", 1, true)
	o.Failed("md5sum", "b", 1, false)
	o.TakenBack(in, 2)

	body := scrape(t, "http://"+s.Addr()+"/metrics")
	for _, want := range []string{
		`tpipe_jobs_claimed_total{stage="md5sum"} 2`,
		`tpipe_jobs_done_total{stage="md5sum"} 1`,
		`tpipe_jobs_retried_total{stage="md5sum"} 1`,
		`tpipe_jobs_failed_total{stage="md5sum"} 1`,
		`tpipe_job_duration_seconds_bucket{stage="md5sum",le="0.064"} 1`,
		`tpipe_job_duration_seconds_count{stage="md5sum"} 1`,
		`tpipe_claims_taken_back_total{place="` + in + `"} 2`,
		`tpipe_place_tokens{place="` + in + `"} 2`,
		`tpipe_place_claims{place="` + in + `"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}
	// The tokens are read at each scrape.
	os.Remove(filepath.Join(in, "a"))
	if body := scrape(t, "http://"+s.Addr()+"/metrics"); !strings.Contains(body, `tpipe_place_tokens{place="`+in+`"} 1`+"\n") {
		t.Errorf("second scrape did not see the token go:\n%s", body)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Error("server still answers after Close")
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

func TestListenBadAddress(t *testing.T) {
	if _, err := Listen("127.0.0.1:notaport", nil); err == nil {
		t.Error("a bad address was accepted")
	}
}

// TestPlaceNamedTwice: a place that is one stage's output and the next
// one's input is reported once; reported twice, it failed every scrape.
func TestPlaceNamedTwice(t *testing.T) {
	mid := t.TempDir()
	s, err := Listen("127.0.0.1:0", []string{mid, mid + "/", filepath.Join(mid, ".")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	body := scrape(t, "http://"+s.Addr()+"/metrics")
	if n := strings.Count(body, "tpipe_place_tokens{"); n != 1 {
		t.Errorf("the place is reported %d times, want once:\n%s", n, body)
	}
}

// TestDeclare: a stage's counters are series at 0 before their first event.
func TestDeclare(t *testing.T) {
	s, err := Listen("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Declare("sort")
	body := scrape(t, "http://"+s.Addr()+"/metrics")
	for _, name := range []string{"claimed", "done", "failed", "retried", "put_back"} {
		if want := `tpipe_jobs_` + name + `_total{stage="sort"} 0`; !strings.Contains(body, want+"\n") {
			t.Errorf("no %s", want)
		}
	}
}
