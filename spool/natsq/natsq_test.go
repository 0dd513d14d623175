package natsq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tpipe/tpipe/internal/natstest"
	"github.com/tpipe/tpipe/spool/jobs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// dial connects to the net name on s, made if missing.
func dial(t *testing.T, s *natstest.Server, name string, o Options) *Net {
	t.Helper()
	a, err := Parse(s.URL() + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	o.Create = true
	n, err := Dial(context.Background(), a, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// upper is a stage's Func: its output is its input in upper case.
func upper(_ context.Context, j *jobs.Job) (int, error) {
	b, err := os.ReadFile(j.In[0])
	if err != nil {
		return 1, err
	}
	_, err = j.Out[0].Write(bytes.ToUpper(b))
	return 0, err
}

// suffix is a stage's Func: its output is its input and a line.
func suffix(_ context.Context, j *jobs.Job) (int, error) {
	b, err := os.ReadFile(j.In[0])
	if err != nil {
		return 1, err
	}
	_, err = j.Out[0].Write(append(b, "done\n"...))
	return 0, err
}

func TestAddr(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"nats://h:1/jobs", "nats://h:1/jobs", ""},
		{"nats://h/jobs/in", "nats://h:4222/jobs/in", ""},
		{"nats://h:1/jobs.in", "nats://h:1/jobs/in", ""},
		{"nats://h:1/", "", "no stream name"},
		{"nats:///x", "", "no server"},
		{"nats://h:1/a b", "", "not a valid stream name"},
		{"nats://h:1/a/b/c", "", "one name after"},
	} {
		a, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q): %v, want an error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || a.String() != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", c.in, a, err, c.want)
		}
	}
	for _, p := range []string{"in", "in.failed", "a_b", "x-y", "é f", "a__2e"} {
		back, ok := untoken(subjectToken(p))
		if !ok || back != p {
			t.Errorf("untoken(subjectToken(%q)) = %q, %v", p, back, ok)
		}
		if strings.ContainsAny(subjectToken(p), ". *>") {
			t.Errorf("subjectToken(%q) = %q", p, subjectToken(p))
		}
	}
}

// TestNet runs a net of two stages on NATS, jobs small and one past the
// server's largest message, and takes every output out once.
func TestNet(t *testing.T) {
	s := natstest.Start(t)
	n := dial(t, s, "jobs", Options{Lease: 2 * time.Second})
	in, err := n.OpenPlace(s.URL() + "/jobs/in")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := range 40 {
		name := fmt.Sprintf("job%02d", i)
		body := fmt.Sprintf("line %d\n", i)
		if i == 7 {
			body = strings.Repeat("big line of a large job\n", 20_000_000/24) // 20 MB: an object
		}
		if err := in.PutJob(name, strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
		want[name] = strings.ToUpper(body) + "done\n"
	}
	root := n.Root()
	stages := []jobs.Stage{
		{Name: "upper", In: []string{root + "/in"}, Out: [][]string{{root + "/mid"}}, Run: upper},
		{Name: "suffix", In: []string{root + "/mid"}, Out: [][]string{{root + "/out"}}, Run: suffix},
	}
	counts, err := jobs.Run(context.Background(), stages, jobs.Options{Places: n, Once: true, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if counts.Done != 80 {
		t.Errorf("done %d jobs, want 80", counts.Done)
	}
	dir := t.TempDir()
	out, err := n.OpenPlace(root + "/out")
	if err != nil {
		t.Fatal(err)
	}
	got, err := out.Get(context.Background(), dir, GetOptions{Once: true})
	if err != nil || got != 40 {
		t.Fatalf("Get: %d jobs, %v", got, err)
	}
	for name, body := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != body {
			t.Errorf("%s: %d bytes (%v), want %d", name, len(b), err, len(body))
		}
	}
	cs, err := n.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Waiting != 0 || c.InFlight != 0 || c.Done != 40 {
			t.Errorf("counts of %s: %+v, want 40 done and nothing waiting", c.Place, c)
		}
	}
}

// TestRedoCopyDropped: a job redone upstream (its worker died after its
// output was stored, before its input was acknowledged) sends a second
// copy of its output; the place downstream drops it, by identity, even
// when the server forgot its Nats-Msg-Id window.
func TestRedoCopyDropped(t *testing.T) {
	s := natstest.Start(t)
	n := dial(t, s, "redo", Options{Lease: 2 * time.Second})
	in, _ := n.OpenPlace(n.Root() + "/in")
	mid, _ := n.OpenPlace(n.Root() + "/mid")
	if err := in.PutJob("a", strings.NewReader("x\n")); err != nil {
		t.Fatal(err)
	}
	// A worker takes a and stores its output; the redo stores it again,
	// after the server's dedupe window is gone (a restart on 2.9, or two
	// minutes): here published without its Nats-Msg-Id.
	c, err := in.Watch(context.Background(), jobs.WatchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	<-c
	tok, err := in.Take("a", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mid.CreateFrom("a", []jobs.Token{tok})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(p, "X\n")
	msg, err := p.(*pending).message()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Commit([]jobs.Pending{p}, nil); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	if _, err := n.js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	if _, err := tok.Done(nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got, err := mid.Get(context.Background(), dir, GetOptions{Once: true})
	if err != nil || got != 1 {
		t.Fatalf("Get: %d jobs, %v; want 1", got, err)
	}
	mid.mu.Lock()
	dropped := mid.dropped
	mid.mu.Unlock()
	if dropped != 1 {
		t.Errorf("dropped %d copies, want 1", dropped)
	}
	// A new job of the same name is not a copy.
	if err := mid.PutJob("a", strings.NewReader("again\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := mid.Get(context.Background(), dir, GetOptions{Once: true}); err != nil || got != 1 {
		t.Fatalf("Get of a new job named as a done one: %d jobs, %v; want 1", got, err)
	}
}

func TestDialErrors(t *testing.T) {
	ctx := context.Background()
	a, _ := Parse("nats://127.0.0.1:1/x")
	if _, err := Dial(ctx, a, Options{Timeout: time.Second}); !errors.Is(err, ErrUnreachable) {
		t.Errorf("unreachable: %v", err)
	}
	plain := natstest.StartNoJetStream(t)
	a, _ = Parse(plain.URL() + "/x")
	if _, err := Dial(ctx, a, Options{Create: true}); !errors.Is(err, ErrNoJetStream) {
		t.Errorf("no JetStream: %v", err)
	}
	s := natstest.Start(t)
	a, _ = Parse(s.URL() + "/nosuch")
	if _, err := Dial(ctx, a, Options{}); !errors.Is(err, ErrNoNet) {
		t.Errorf("missing net: %v", err)
	}
}

// TestLeftoverCopyNotBusy: a message delivered and not acknowledged whose
// job is marked done in its place is a leftover copy (Debian's 2.9.10
// keeps such counts after a SIGKILL, and they never come down): it does
// not keep --once from ending, and the counts do not show it in flight.
// An unmarked one is a job held.
func TestLeftoverCopyNotBusy(t *testing.T) {
	s := natstest.Start(t)
	n := dial(t, s, "left", Options{Lease: time.Minute})
	in, _ := n.OpenPlace(n.Root() + "/in")
	if err := in.PutJob("a", strings.NewReader("x\n")); err != nil {
		t.Fatal(err)
	}
	c, err := in.Watch(context.Background(), jobs.WatchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	<-c
	tok, err := in.Take("a", false)
	if err != nil {
		t.Fatal(err)
	}
	look := func(wantBusy bool, wantInFlight int) {
		t.Helper()
		ct, err := n.Inspect(in.Addr())
		if err != nil || ct.InFlight != wantInFlight {
			t.Errorf("in flight %d, %v; want %d", ct.InFlight, err, wantInFlight)
		}
		busy, err := in.Busy()
		if err != nil || busy != wantBusy {
			t.Errorf("busy %v, %v; want %v", busy, err, wantBusy)
		}
		if busy, err := n.Busy(); err != nil || busy != wantBusy {
			t.Errorf("net busy %v, %v; want %v", busy, err, wantBusy)
		}
	}
	look(true, 1)
	// Its mark stored, its acknowledgement lost.
	if _, err := n.marks.Put(context.Background(), in.markKey(tok.(*token).id), []byte("test")); err != nil {
		t.Fatal(err)
	}
	look(false, 0)
}
