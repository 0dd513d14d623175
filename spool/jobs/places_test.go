package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpipe/tpipe/spool/jobs/jobstest"
)

// memPlaces is a backend with no folder: tokens are bytes in maps, a take
// moves them into the worker's hands and writes them to a file of its own
// for the job's Func (as a message system's backend does with a message),
// a commit reads the pending files back. It shows that the engine stands
// on the Places interface alone, as raft's core stands on its Storage.
type memPlaces struct {
	tmp string

	mu     sync.Mutex
	places map[string]*memPlace
	n      int // for temporary file names
}

func newMemPlaces(t *testing.T) *memPlaces {
	return &memPlaces{tmp: t.TempDir(), places: map[string]*memPlace{}}
}

func (m *memPlaces) Open(addr string) (Place, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.places[addr]
	if p == nil {
		p = &memPlace{m: m, addr: addr, ready: map[string][]byte{}, held: map[string][]byte{}, wake: make(chan struct{}, 1)}
		m.places[addr] = p
	}
	return p, nil
}

func (m *memPlaces) Owner() string        { return "mem" }
func (m *memPlaces) Lease() time.Duration { return time.Minute }

func (m *memPlaces) Commit(ts []Pending, trace func(op, path string)) error {
	for _, t := range ts {
		p := t.(*memPending)
		b, err := os.ReadFile(p.f.Name())
		if err != nil {
			return err
		}
		p.f.Close()
		os.Remove(p.f.Name())
		p.p.put(p.name, b)
	}
	return nil
}

// file writes b to a new file of the backend's own and returns it.
func (m *memPlaces) file(b []byte) (*os.File, error) {
	m.mu.Lock()
	m.n++
	name := filepath.Join(m.tmp, fmt.Sprint(m.n))
	m.mu.Unlock()
	f, err := os.Create(name)
	if err == nil && b != nil {
		_, err = f.Write(b)
	}
	return f, err
}

// contents returns a place's ready tokens, for the test to look at.
func (m *memPlaces) contents(addr string) map[string]string {
	p, _ := m.Open(addr)
	mp := p.(*memPlace)
	mp.mu.Lock()
	defer mp.mu.Unlock()
	out := map[string]string{}
	for n, b := range mp.ready {
		out[n] = string(b)
	}
	return out
}

type memPlace struct {
	m    *memPlaces
	addr string
	wake chan struct{}

	mu    sync.Mutex
	ready map[string][]byte
	held  map[string][]byte
}

func (p *memPlace) put(name string, b []byte) {
	p.mu.Lock()
	p.ready[name] = b
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *memPlace) Addr() string { return p.addr }
func (p *memPlace) Watch(ctx context.Context, c WatchConfig) (<-chan struct{}, error) {
	return p.wake, nil
}
func (p *memPlace) Close() error { return nil }

func (p *memPlace) List() (Listing, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var l Listing
	for n := range p.ready {
		l.Ready = append(l.Ready, n)
	}
	slices.Sort(l.Ready)
	return l, nil
}

func (p *memPlace) Take(name string, lock bool) (Token, error) {
	p.mu.Lock()
	b, ok := p.ready[name]
	if ok {
		delete(p.ready, name)
		p.held[name] = b
	}
	p.mu.Unlock()
	if !ok {
		return nil, errLost
	}
	f, err := p.m.file(b)
	if err != nil {
		return nil, err
	}
	f.Close()
	return &memToken{p: p, name: name, path: f.Name()}, nil
}

func (p *memPlace) Create(name string) (Pending, error) {
	f, err := p.m.file(nil)
	if err != nil {
		return nil, err
	}
	return &memPending{p: p, name: name, f: f}, nil
}

func (p *memPlace) Put(name string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	p.put(name, b.Bytes())
	return nil
}

func (p *memPlace) Reap() (int, error) { return 0, nil }

func (p *memPlace) Busy() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held) > 0, nil
}

type memToken struct {
	p          *memPlace
	name, path string
}

func (t *memToken) Path() string           { return t.path }
func (t *memToken) Changed(last bool) bool { return false }
func (t *memToken) Suspect()               {}

func (t *memToken) let() []byte {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	b := t.p.held[t.name]
	delete(t.p.held, t.name)
	os.Remove(t.path)
	return b
}

func (t *memToken) Done(spares Place) (bool, error) { t.let(); return false, nil }
func (t *memToken) Release() error                  { t.p.put(t.name, t.let()); return nil }
func (t *memToken) MoveTo(q Place) error            { q.(*memPlace).put(t.name, t.let()); return nil }
func (t *memToken) MoveToPath(path string) error {
	return errors.New("memory places have no paths")
}

type memPending struct {
	p    *memPlace
	name string
	f    *os.File
}

func (p *memPending) Name() string                { return p.name }
func (p *memPending) File() *os.File              { return p.f }
func (p *memPending) Write(b []byte) (int, error) { return p.f.Write(b) }
func (p *memPending) Place() Place                { return p.p }
func (p *memPending) Abort() error {
	p.f.Close()
	return os.Remove(p.f.Name())
}

var (
	_ Places  = (*memPlaces)(nil)
	_ Token   = (*memToken)(nil)
	_ Pending = (*memPending)(nil)
)

// TestMemoryPlaces runs the engine on places with no folder: a net of two
// stages (upper-case, then count the lines), a job that fails for good
// with its record beside it in the failed place, an and-merge of two
// places; every job once, nothing held at the end.
func TestMemoryPlaces(t *testing.T) {
	m := newMemPlaces(t)
	upper := func(_ context.Context, j *Job) (int, error) {
		b, err := os.ReadFile(j.In[0])
		if err != nil {
			return -1, err
		}
		if bytes.Contains(b, []byte("boom")) {
			fmt.Fprintln(j.Stderr, "boom found")
			return 3, nil
		}
		_, err = j.Out[0].Write(bytes.ToUpper(b))
		return 0, err
	}
	count := func(_ context.Context, j *Job) (int, error) {
		var n int
		for _, p := range j.In {
			b, err := os.ReadFile(p)
			if err != nil {
				return -1, err
			}
			n += bytes.Count(b, []byte("\n"))
		}
		_, err := fmt.Fprintln(j.Out[0], n)
		return 0, err
	}
	for name, text := range map[string]string{"a": "x\ny\n", "b": "z\n", "bad": "boom\n"} {
		p, _ := m.Open("in")
		p.(*memPlace).put(name, []byte(text))
	}
	for name, text := range map[string]string{"a": "1\n2\n3\n", "b": "4\n"} {
		p, _ := m.Open("other")
		p.(*memPlace).put(name, []byte(text))
	}
	stages := []Stage{
		{Name: "upper", In: []string{"in"}, Out: [][]string{{"mid"}}, Run: upper, Retries: 1},
		{Name: "count", In: []string{"mid", "other"}, Out: [][]string{{"out"}}, Run: count},
	}
	var errb strings.Builder
	n, err := Run(jobstest.Ctx(t), stages, Options{Places: m, Once: true, Workers: 2, Recheck: 10 * time.Millisecond, Stderr: &errb})
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 4 || n.Failed != 1 || n.Retried != 1 {
		t.Errorf("counts %+v, want 4 done, 1 failed after 1 retry", n)
	}
	if got := m.contents("out"); got["a"] != "5\n" || got["b"] != "2\n" || len(got) != 2 {
		t.Errorf("out = %q", got)
	}
	failed := m.contents("in.failed")
	if failed["bad"] != "boom\n" || failed["bad.stderr"] != "boom found\n" || !strings.Contains(failed["bad.status"], "status 3\ntries 2\nstage upper\nowner mem\n") {
		t.Errorf("in.failed = %q", failed)
	}
	for _, addr := range []string{"in", "mid", "other"} {
		if left := m.contents(addr); len(left) != 0 {
			t.Errorf("%s left %v", addr, left)
		}
	}
	if !strings.Contains(errb.String(), "job bad (upper) failed: exit status 3 after 2 tries") {
		t.Errorf("stderr:\n%s", errb.String())
	}
}
