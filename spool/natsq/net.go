// Package natsq puts the job engine's places (package jobs) on NATS
// JetStream, so that workers on hosts that share no file system share a
// net of jobs through a NATS server or cluster.
//
// # Mapping
//
// A net NAME is one stream NAME with the subjects NAME.>, under work-queue
// retention: a message is gone once it is acknowledged. Each place P is
// the subject NAME.P (P made a subject token: see subjectToken) and one durable
// pull consumer tpipe_P that every worker of the place shares, so that
// JetStream hands each message to one worker at a time. A token is one
// message: its headers name the job (Tpipe-Name) and give its identity
// (Tpipe-Id); its body is the job's bytes, or, for a job larger than the
// server takes in one message, a reference to an object of the net's
// object store (Tpipe-Object), which JetStream stores in chunks.
//
// The places' contract with the engine (see jobs.Places) maps so:
//
//   - a take is the fetch that delivered the message; while a worker holds
//     it, ready or running, it keeps the message's lease (the consumer's
//     AckWait) alive with in-progress acknowledgements; a worker that dies
//     stops doing so, and JetStream delivers the message again after the
//     lease (take-back is the server's);
//   - a commit publishes the job's outputs and waits for every publish to
//     be acknowledged (stored), all of a batch at once;
//   - the input's removal writes the job's mark, then acknowledges the
//     message.
//
// # Redos
//
// At-least-once means a job may run twice: its worker dies after its
// outputs were stored and before its input was acknowledged. The second
// copy of an output must not show twice downstream, and neither the
// server's Nats-Msg-Id window (forgotten when the server restarts) nor a
// message's delivery count (restarted by a server crash) can tell it. So
// every token carries an identity: tpipe put draws a new one for each job,
// and an output's identity is a hash of its place, its name and its
// job's inputs' identities, the same for a redo. When a job's outputs are
// stored, its input's identity is marked done in the net's marks bucket
// (a key-value bucket, kept a week) before the input is acknowledged; a
// message whose identity is marked in its place is a copy of a job done
// already, and is acknowledged and dropped when a worker takes it (not
// when it arrives: two copies may wait at once). A mark is written only
// after the outputs are stored, so a marked job lost nothing. Marks are
// published without waiting, and one goroutine (the acker) acknowledges
// each job once its mark is stored; meanwhile the job stays held, and a
// copy of it taken in the same process is dropped on the strength of
// the mark on its way.
package natsq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tpipe/tpipe/spool/jobs"
)

// Headers of a token's message.
const (
	hName   = "Tpipe-Name"   // the job's name
	hID     = "Tpipe-Id"     // its identity (see Redos)
	hObject = "Tpipe-Object" // the object holding its bytes, when not inline
	hSize   = "Tpipe-Size"   // their size, with hObject
)

// description marks the streams tpipe made: a stream of that name made by
// something else is refused, not used.
const description = "tpipe job net"

// MarkAge is how long a done job's mark is kept: a copy of it that comes
// later than that runs again.
const MarkAge = 7 * 24 * time.Hour

// Options configure Dial. The zero Options are the defaults.
type Options struct {
	// Owner names this worker in messages; "" means host:pid.
	Owner string
	// Lease is how long a message a worker stopped renewing stays its
	// own (the consumers' AckWait); 0 means a minute.
	Lease time.Duration
	// Prefetch is how many messages of a place this worker holds ready
	// before a worker of its takes them; 0 means 4.
	Prefetch int
	// Timeout bounds every call to the server; 0 means 10s. A commit, a
	// mark and a fetch retry for Patience while the server is away.
	Timeout time.Duration
	// Patience is how long a commit or a mark keeps trying while the
	// server cannot be reached (a restart) before it fails; 0 means 10m.
	Patience time.Duration
	// Create makes the net (its stream and buckets) when it is missing;
	// without it a missing net is an error.
	Create bool
	// Log receives a line when the connection to the server is lost or
	// back; nil discards them.
	Log io.Writer
}

// Net is a net of jobs on a NATS server: its stream, its buckets and the
// places this process opened. It implements jobs.Places.
type Net struct {
	addr    Addr
	o       Options
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	marks   jetstream.KeyValue
	objects jetstream.ObjectStore
	scratch string // where the tokens held are files, for the jobs' Funcs
	inline  int    // the largest job sent in one message

	mu     sync.Mutex
	places map[string]*Place
	closed bool
	stop   context.CancelFunc
	wg     sync.WaitGroup
	acks   chan doneReq // to acker
	// marking counts the marks published and not yet stored, by key: a
	// copy of their job taken meanwhile is dropped as done.
	marking map[string]int
	acked   chan struct{} // closed when acker ends
}

var _ jobs.Places = (*Net)(nil)

// Errors of Dial a caller tells apart (all said in one line).
var (
	ErrUnreachable = errors.New("cannot reach the NATS server")
	ErrNoJetStream = errors.New("runs without JetStream")
	ErrNoNet       = errors.New("no such net")
	ErrForeign     = errors.New("a stream of that name was made by something else")
)

// Dial connects to the net at a (a's place is ignored).
func Dial(ctx context.Context, a Addr, o Options) (*Net, error) {
	if o.Owner == "" {
		host, _ := os.Hostname()
		o.Owner = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	o.Lease = cmp.Or(o.Lease, time.Minute)
	o.Prefetch = max(o.Prefetch, 0)
	if o.Prefetch == 0 {
		o.Prefetch = 4
	}
	o.Timeout = cmp.Or(o.Timeout, 10*time.Second)
	o.Patience = cmp.Or(o.Patience, 10*time.Minute)
	if o.Log == nil {
		o.Log = io.Discard
	}
	n := &Net{addr: a.Net(), o: o, places: map[string]*Place{}, marking: map[string]int{}}
	host := strings.TrimPrefix(a.Server, Scheme)
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	nc, err := nats.Connect(a.Server,
		nats.Name("tpipe "+o.Owner),
		nats.Timeout(min(o.Timeout, 5*time.Second)),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				fmt.Fprintf(o.Log, "lost the NATS server at %s (%v); trying again\n", host, err)
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			// (a slow consumer after a restart, when the pulls of every
			// place come back at once: the jobs are delivered again)
			fmt.Fprintf(o.Log, "NATS at %s: %v\n", host, err)
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			fmt.Fprintf(o.Log, "back on the NATS server at %s\n", host)
		}))
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v (is nats-server running there, with -js?)", ErrUnreachable, host, err)
	}
	n.nc = nc
	fail := func(err error) (*Net, error) {
		nc.Close()
		return nil, err
	}
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(o.Timeout))
	if err != nil {
		return fail(err)
	}
	n.js = js
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if _, err := js.AccountInfo(cctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return fail(fmt.Errorf("the NATS server at %s %w: start it with -js (nats-server -js -sd DIR)", host, ErrNoJetStream))
		}
		return fail(fmt.Errorf("%w at %s: %v", ErrUnreachable, host, err))
	}
	if err := n.openStream(cctx, host); err != nil {
		return fail(err)
	}
	kvName, objName := "tpipe_marks_"+a.Stream, "tpipe_jobs_"+a.Stream
	if o.Create {
		n.marks, err = js.CreateOrUpdateKeyValue(cctx, jetstream.KeyValueConfig{Bucket: kvName, Description: "tpipe: jobs done in each place of net " + a.Stream, TTL: MarkAge, Storage: jetstream.FileStorage})
		if err == nil {
			n.objects, err = js.CreateOrUpdateObjectStore(cctx, jetstream.ObjectStoreConfig{Bucket: objName, Description: "tpipe: jobs of net " + a.Stream + " too large for one message", Storage: jetstream.FileStorage})
		}
	} else {
		n.marks, err = js.KeyValue(cctx, kvName)
		if err == nil {
			n.objects, err = js.ObjectStore(cctx, objName)
		}
	}
	if err != nil {
		return fail(fmt.Errorf("net %s on %s: its buckets: %v", a.Stream, host, err))
	}
	// A job and its headers fit in one message up to the server's
	// maximum, less room for the headers.
	n.inline = max(int(nc.MaxPayload())-16<<10, 1<<10)
	if n.scratch, err = scratchDir(); err != nil {
		return fail(err)
	}
	kctx, stop := context.WithCancel(context.Background())
	n.stop = stop
	n.wg.Go(func() { n.keepAlive(kctx) })
	n.acks, n.acked = make(chan doneReq, 4096), make(chan struct{})
	go func() {
		defer close(n.acked)
		n.acker()
	}()
	return n, nil
}

// openStream finds the net's stream, or makes it under Create, and
// checks that it is tpipe's.
func (n *Net) openStream(ctx context.Context, host string) error {
	name := n.addr.Stream
	s, err := n.js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if !n.o.Create {
			return fmt.Errorf("%w %s on %s (tpipe put or tpipe serve makes it)", ErrNoNet, name, host)
		}
		s, err = n.js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        name,
			Description: description,
			Subjects:    []string{name + ".>"},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = n.js.Stream(ctx, name) // another worker made it first
		}
	}
	if err != nil {
		return fmt.Errorf("net %s on %s: %v", name, host, err)
	}
	cfg := s.CachedInfo().Config
	if cfg.Description != description || cfg.Retention != jetstream.WorkQueuePolicy || len(cfg.Subjects) != 1 || cfg.Subjects[0] != name+".>" {
		return fmt.Errorf("%w: stream %s on %s (subjects %s): give tpipe a name of its own", ErrForeign, name, host, strings.Join(cfg.Subjects, " "))
	}
	n.stream = s
	return nil
}

// Addr is the net's address.
func (n *Net) Addr() Addr { return n.addr }

// Owner names this worker.
func (n *Net) Owner() string { return n.o.Owner }

// Lease is the consumers' AckWait.
func (n *Net) Lease() time.Duration { return n.o.Lease }

// Close gives back the messages held ready and not taken, stops the
// watches and closes the connection.
func (n *Net) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	ps := make([]*Place, 0, len(n.places))
	for _, p := range n.places {
		ps = append(ps, p)
	}
	close(n.acks) // (under n.mu, which Done holds to send)
	n.mu.Unlock()
	for _, p := range ps {
		p.Close()
	}
	<-n.acked
	n.stop()
	n.wg.Wait()
	n.nc.Flush()
	n.nc.Close()
	return os.RemoveAll(n.scratch)
}

// Open opens the place at addr: a nats:// address of the net, or a path
// whose last element names the place (the engine's stages name places
// under the net's own root, see Root).
func (n *Net) Open(addr string) (jobs.Place, error) {
	return n.OpenPlace(addr)
}

// Root is the path the places of a net are named under when a front end
// builds stages with paths (front/stages.NewNet): Open reads their last
// element.
func (n *Net) Root() string { return "/" + n.addr.Stream }

// OpenPlace is Open, with the place's own type.
func (n *Net) OpenPlace(addr string) (*Place, error) {
	name := path.Base(addr)
	if IsAddr(addr) {
		a, err := Parse(addr)
		if err != nil {
			return nil, err
		}
		if a.Server != n.addr.Server || a.Stream != n.addr.Stream {
			return nil, fmt.Errorf("%s is not in net %s: one run uses one net", addr, n.addr)
		}
		name = a.Place
	} else if path.Dir(addr) != n.Root() {
		return nil, fmt.Errorf("%s is not a place of net %s", addr, n.addr)
	}
	if name == "" || name == "." || name == "/" {
		return nil, fmt.Errorf("%s names no place", addr)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.places[name]; p != nil {
		return p, nil
	}
	p := newPlace(n, name)
	if !p.failed() {
		ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
		defer cancel()
		if _, err := p.consumer(ctx); err != nil {
			return nil, err
		}
	}
	n.places[name] = p
	return p, nil
}

// Commit publishes the pending tokens ts and waits until the server has
// stored every one (see Net's doc). While the server cannot be reached
// it keeps trying for Options.Patience.
func (n *Net) Commit(ts []jobs.Pending, trace func(op, path string)) error {
	type out struct {
		t   *pending
		msg *nats.Msg
		fut jetstream.PubAckFuture
	}
	outs := make([]out, 0, len(ts))
	defer func() {
		for _, o := range outs {
			o.t.Abort()
		}
	}()
	for i, t := range ts {
		pt := t.(*pending)
		msg, err := pt.message()
		if err != nil {
			for _, t := range ts[i:] {
				t.Abort()
			}
			return err
		}
		fut, err := n.js.PublishMsgAsync(msg, jetstream.WithMsgID(msg.Header.Get(hID)+"@"+pt.p.tok))
		if err != nil {
			fut = nil // published again below
		}
		outs = append(outs, out{pt, msg, fut})
	}
	deadline := time.Now().Add(n.o.Patience)
	for _, o := range outs {
		if o.fut != nil {
			timer := time.NewTimer(n.o.Timeout)
			select {
			case <-o.fut.Ok():
				timer.Stop()
				if trace != nil {
					trace("publish", o.t.p.subject+"/"+o.t.name)
				}
				continue
			case <-o.fut.Err():
			case <-timer.C:
			}
			timer.Stop()
		}
		if err := n.retry(deadline, func(ctx context.Context) error {
			_, err := n.js.PublishMsg(ctx, o.msg, jetstream.WithMsgID(o.msg.Header.Get(hID)+"@"+o.t.p.tok))
			return err
		}); err != nil {
			return fmt.Errorf("publish %s to %s: %w", o.t.name, o.t.p.Addr(), err)
		}
		if trace != nil {
			trace("publish", o.t.p.subject+"/"+o.t.name)
		}
	}
	return nil
}

// retry calls f, each call bounded by Timeout, until it succeeds or
// deadline passes (the server restarting, a connection being made again).
func (n *Net) retry(deadline time.Time, f func(ctx context.Context) error) error {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
		err := f(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || n.nc.IsClosed() {
			if n.away(err) {
				return fmt.Errorf("%w (the NATS server did not answer for %v)", err, n.o.Patience.Round(time.Second))
			}
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// markSubject is the subject of the mark key in the marks bucket.
func (n *Net) markSubject(key string) string {
	return "$KV.tpipe_marks_" + n.addr.Stream + "." + key
}

// away reports whether err comes of the server being away for now (a
// restart, a connection being made again): a look that fails so is
// tried again later rather than ending a run.
func (n *Net) away(err error) bool {
	return !n.nc.IsConnected() || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// keepAlive renews, a few times a lease, the lease of every message this
// process holds, ready or taken.
func (n *Net) keepAlive(ctx context.Context) {
	t := time.NewTicker(max(n.o.Lease/4, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n.mu.Lock()
		ps := make([]*Place, 0, len(n.places))
		for _, p := range n.places {
			ps = append(ps, p)
		}
		n.mu.Unlock()
		for _, p := range ps {
			for _, m := range p.heldMsgs() {
				m.InProgress()
			}
		}
	}
}

// scratchDir makes the folder where this process keeps the tokens it
// holds as files, and removes those of processes that died without
// removing theirs (a worker killed with SIGKILL): each is named after
// its process.
func scratchDir() (string, error) {
	tmp := scratchRoot()
	if old, _ := filepath.Glob(filepath.Join(tmp, "tpipe-nats-*-*")); len(old) > 0 {
		for _, dir := range old {
			pid, err := strconv.Atoi(strings.Split(filepath.Base(dir), "-")[2])
			if err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
				os.RemoveAll(dir)
			}
		}
	}
	return os.MkdirTemp(tmp, fmt.Sprintf("tpipe-nats-%d-", os.Getpid()))
}

// scratchRoot is where scratch folders go: $TMPDIR when set, else
// /dev/shm when it is a folder this process may write (a job's bytes
// pass there and are gone in a moment: on a disk, creating, writing and
// removing a file of 4 KiB cost 0.5 ms here, on tmpfs 0.02 ms), else
// /tmp.
func scratchRoot() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && syscall.Access("/dev/shm", 2) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// Served reports whether the place name has its consumer on the server:
// a stage's workers, or a get, opened it once.
func (n *Net) Served(name string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
	defer cancel()
	_, err := n.stream.Consumer(ctx, "tpipe_"+subjectToken(name))
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return false, nil
	}
	return err == nil, err
}

// pipelineKey is the key of the marks bucket that holds the pipeline a
// net is served with (no mark's key: theirs hold a '.').
const pipelineKey = "pipeline"

// ServeWith records src as the pipeline the net is served with, and
// returns the one recorded before if it differs: two workers of one net
// running different pipelines would mix their results. replace records
// src whatever was there.
func (n *Net) ServeWith(src string, replace bool) (other string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
	defer cancel()
	if replace {
		_, err = n.marks.Put(ctx, pipelineKey, []byte(src))
		return "", err
	}
	_, err = n.marks.Create(ctx, pipelineKey, []byte(src))
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return "", err
	}
	e, err := n.marks.Get(ctx, pipelineKey)
	if err != nil {
		return "", err
	}
	if string(e.Value()) != src {
		return string(e.Value()), nil
	}
	return "", nil
}
