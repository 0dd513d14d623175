package natsq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/place"
)

// Place is one place of a net: a subject of its stream and the durable
// consumer its workers share. It implements jobs.Place and jobs.Lineage.
type Place struct {
	n       *Net
	name    string // the place's name ("in", "in.failed")
	tok     string // name as a subject token
	subject string // the stream's subject of the place
	durable string // its consumer's name

	mu       sync.Mutex
	cons     jetstream.Consumer
	ready    map[string][]*token // fetched, not taken, by job name
	nready   int
	held     map[*token]bool // taken by a job
	dropped  int             // copies of jobs done already, dropped
	room     chan struct{}   // one slot: a ready message was taken
	notify   chan struct{}   // one slot: a message arrived
	stopPump context.CancelFunc
	pumpDone chan struct{}
}

var (
	_ jobs.Place   = (*Place)(nil)
	_ jobs.Lineage = (*Place)(nil)
	_ jobs.Token   = (*token)(nil)
	_ jobs.Pending = (*pending)(nil)
)

func newPlace(n *Net, name string) *Place {
	tok := subjectToken(name)
	return &Place{n: n, name: name, tok: tok, subject: n.addr.Stream + "." + tok, durable: "tpipe_" + tok,
		ready: map[string][]*token{}, held: map[*token]bool{}, room: make(chan struct{}, 1), notify: make(chan struct{}, 1)}
}

// RecordsSuffix names the place of a failed place's records (NAME.stderr,
// NAME.status): P.failed.records.
const RecordsSuffix = ".records"

// failed reports whether the place holds failed jobs: no consumer takes
// them (a person looks at them, and moves them back).
func (p *Place) failed() bool { return strings.HasSuffix(p.name, ".failed") }

// consumer makes (or finds) the place's durable consumer, and returns it.
func (p *Place) consumer(ctx context.Context) (jetstream.Consumer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cons != nil {
		return p.cons, nil
	}
	c, err := p.n.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       p.durable,
		Description:   "tpipe: the workers of place " + p.name,
		FilterSubject: p.subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       p.n.o.Lease,
		MaxDeliver:    -1,
		MaxAckPending: -1,
	})
	if err != nil {
		return nil, fmt.Errorf("place %s: its consumer: %v", p.Addr(), err)
	}
	p.cons = c
	return c, nil
}

// Name is the place's name in its net.
func (p *Place) Name() string { return p.name }

// Addr is the place's nats:// address.
func (p *Place) Addr() string { a := p.n.addr; a.Place = p.name; return a.String() }

// Watch starts fetching the place's messages, up to Options.Prefetch held
// ready at once, and tells c of each that arrives.
func (p *Place) Watch(ctx context.Context, c jobs.WatchConfig) (<-chan struct{}, error) {
	if _, err := p.consumer(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopPump == nil {
		pctx, stop := context.WithCancel(context.Background())
		p.stopPump, p.pumpDone = stop, make(chan struct{})
		go func() {
			defer close(p.pumpDone)
			p.pump(pctx)
		}()
	}
	return p.notify, nil
}

// pump pulls the place's messages (nats.go keeps up to Prefetch of
// them coming, in overlapping pulls) and holds them ready, while fewer
// than Prefetch wait for a worker. When ctx is done it gives back what
// the pulls had brought and ends. If the consumer is deleted (by a
// person), it is made again and the pulls go on.
func (p *Place) pump(ctx context.Context) {
	guarded := make(chan struct{})
	go func() {
		defer close(guarded)
		p.guard(ctx)
	}()
	defer func() { <-guarded }()
	for ctx.Err() == nil {
		it := p.messages(ctx)
		if it == nil {
			return
		}
		p.pull(ctx, it)
	}
}

// messages starts the pulls of the place's consumer, made again if it
// was deleted; nil when ctx is done first.
func (p *Place) messages(ctx context.Context) jetstream.MessagesContext {
	for {
		cctx, cancel := context.WithTimeout(ctx, p.n.o.Timeout)
		cons, err := p.consumer(cctx)
		cancel()
		if err == nil {
			if it, err := cons.Messages(jetstream.PullMaxMessages(p.n.o.Prefetch)); err == nil {
				return it
			}
		}
		sleep(ctx, 250*time.Millisecond) // the server is away
		if ctx.Err() != nil {
			return nil
		}
	}
}

// pull holds ready the messages of it until ctx is done or it ends: a
// consumer deleted under it is then forgotten, for messages to make it
// again.
func (p *Place) pull(ctx context.Context, it jetstream.MessagesContext) {
	stopped, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
			it.Drain()
		case <-ended:
			it.Stop()
		}
	}()
	defer func() { close(ended); <-stopped }()
	for {
		p.mu.Lock()
		full := p.nready >= p.n.o.Prefetch
		p.mu.Unlock()
		if full && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-p.room:
			}
			continue
		}
		m, err := it.Next()
		switch {
		case errors.Is(err, jetstream.ErrMsgIteratorClosed) && ctx.Err() != nil:
			return
		case errors.Is(err, jetstream.ErrMsgIteratorClosed):
			p.forgetConsumer()
			return
		case errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConsumerNotFound):
			p.forgetConsumer()
			sleep(ctx, renewPause)
			return
		case err != nil:
			sleep(ctx, 250*time.Millisecond) // a heartbeat missed: the server is away
		case ctx.Err() != nil:
			m.Nak() // drained after the end: for another worker
		default:
			p.arrive(m)
		}
	}
}

// info is the place's consumer's info; a consumer deleted on the server
// (by another worker's guard) is made again.
func (p *Place) info(ctx context.Context) (*jetstream.ConsumerInfo, error) {
	for again := true; ; again = false {
		cons, err := p.consumer(ctx)
		if err != nil {
			return nil, err
		}
		info, err := cons.Info(ctx)
		if errors.Is(err, jetstream.ErrConsumerNotFound) && again {
			p.forgetConsumer()
			continue
		}
		return info, err
	}
}

// renewPause is how long a worker waits, once a consumer is deleted,
// before it makes it again: the server removes a deleted consumer's
// files after it answers, and one made again before that has none.
const renewPause = 2 * time.Second

// forgetConsumer drops the consumer this process knew, deleted on the
// server: consumer makes it again.
func (p *Place) forgetConsumer() {
	p.mu.Lock()
	p.cons = nil
	p.mu.Unlock()
}

// guard looks at the place's consumer while the pump runs, and says so
// on the log, once, when the server has stopped serving it: jobs wait,
// this worker pulls (it holds fewer than Prefetch ready), and nothing has
// been delivered for twice the lease (at least 15 s). It only speaks: a
// false alarm costs a line.
//
// Debian's nats-server 2.9.10, killed and started again on its store,
// can keep counting as delivered and unacknowledged messages that are
// gone from the stream, and a consumer in that state may stop delivering
// even what waits (the crash test saw it about once in fifteen runs;
// nats-server issues 4736 and 6374 describe the same on 2.10). Deleting
// the consumer and making it again would mend it, but not from here: the
// server removes a deleted consumer's files after it answers, and one
// made again meanwhile, by this worker or any other, comes back without
// them (2.15.2) or with the wrong counts (2.9.10, where --once then saw
// a net of 1,082 waiting jobs quiet). A person can do it with every
// worker stopped; the line says how.
func (p *Place) guard(ctx context.Context) {
	every := min(max(p.n.o.Lease/4, time.Second), 10*time.Second)
	limit := max(2*p.n.o.Lease, 15*time.Second)
	var (
		last       uint64 // the consumer's deliveries at the last look
		stuckSince time.Time
		said       bool
	)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.mu.Lock()
		cons, pulling := p.cons, p.nready < p.n.o.Prefetch
		p.mu.Unlock()
		if cons == nil {
			stuckSince = time.Time{}
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, p.n.o.Timeout)
		info, err := cons.Info(cctx)
		cancel()
		if err != nil {
			stuckSince = time.Time{} // the server is away: its clock starts again once back
			continue
		}
		stuck := info.NumPending > 0 && pulling && info.Delivered.Consumer == last
		last = info.Delivered.Consumer
		switch {
		case !stuck:
			stuckSince, said = time.Time{}, false
		case stuckSince.IsZero():
			stuckSince = time.Now()
		case time.Since(stuckSince) >= limit && !said:
			said = true
			fmt.Fprintf(p.n.o.Log, "place %s: %d jobs wait and the server has delivered none for %v (a fault of nats-server 2.9 after a crash): stop its workers, delete the consumer %s of stream %s, and start them again\n",
				p.Addr(), info.NumPending, limit.Round(time.Second), p.durable, p.n.addr.Stream)
		}
	}
}

// arrive holds the message m ready.
func (p *Place) arrive(m jetstream.Msg) {
	t, err := p.parse(m)
	if err != nil {
		m.Term() // not a message of a job; never delivered again
		return
	}
	p.mu.Lock()
	p.ready[t.name] = append(p.ready[t.name], t)
	p.nready++
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

// copyOfDone reports whether t is a copy of a job done already in this
// place (its mark is there): then it is acknowledged and dropped. Asked
// at the take, not when the message arrives: two copies may wait at once.
func (p *Place) copyOfDone(t *token) (bool, error) {
	key := p.markKey(t.id)
	p.n.mu.Lock()
	marking := p.n.marking[key] > 0 // done here, its mark on its way
	p.n.mu.Unlock()
	var err error
	if !marking {
		ctx, cancel := context.WithTimeout(context.Background(), p.n.o.Timeout)
		_, err = p.n.marks.Get(ctx, key)
		cancel()
	}
	switch {
	case err == nil:
		t.m.Ack()
		p.n.dropObject(t.object)
		p.mu.Lock()
		p.dropped++
		p.mu.Unlock()
		t.let()
		return true, nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	}
	return false, err
}

// parse reads a message's headers into a token. A message published by
// another program, without tpipe's headers, is a job named after its
// sequence number.
func (p *Place) parse(m jetstream.Msg) (*token, error) {
	md, err := m.Metadata()
	if err != nil {
		return nil, err
	}
	h := m.Headers()
	t := &token{p: p, m: m, seq: md.Sequence.Stream, name: h.Get(hName), id: h.Get(hID), object: h.Get(hObject)}
	if t.name == "" || place.ValidName(t.name) != nil {
		t.name = fmt.Sprintf("msg-%d", t.seq)
	}
	if t.id == "" {
		t.id = fmt.Sprintf("seq-%d", t.seq)
	}
	if t.object != "" {
		if t.size, err = strconv.ParseInt(h.Get(hSize), 10, 64); err != nil {
			return nil, fmt.Errorf("message %d: bad %s", t.seq, hSize)
		}
	}
	return t, nil
}

// markKey is the key of the mark of identity id done in this place.
func (p *Place) markKey(id string) string { return p.tok + "." + id }

// heldMsgs are the messages the place holds, ready or taken.
func (p *Place) heldMsgs() []jetstream.Msg {
	p.mu.Lock()
	defer p.mu.Unlock()
	ms := make([]jetstream.Msg, 0, p.nready+len(p.held))
	for _, ts := range p.ready {
		for _, t := range ts {
			ms = append(ms, t.m)
		}
	}
	for t := range p.held {
		ms = append(ms, t.m)
	}
	return ms
}

// List lists the jobs held ready.
func (p *Place) List() (jobs.Listing, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := jobs.Listing{Ready: make([]string, 0, len(p.ready))}
	for name := range p.ready {
		l.Ready = append(l.Ready, name)
	}
	slices.Sort(l.Ready)
	return l, nil
}

// Take takes the job name held ready: its bytes are written to a file of
// the scratch folder, the job's input. lock is refused: a stage that
// reads its inputs where they are (pmjq 1.0's command line) needs
// folders.
func (p *Place) Take(name string, lock bool) (jobs.Token, error) {
	if lock {
		return nil, errors.New("a stage that reads its inputs where they are (pmjq 1.0's command line) needs folders, not NATS")
	}
	p.mu.Lock()
	ts := p.ready[name]
	if len(ts) == 0 {
		p.mu.Unlock()
		return nil, jobs.ErrLost
	}
	t := ts[0]
	if len(ts) == 1 {
		delete(p.ready, name)
	} else {
		p.ready[name] = ts[1:]
	}
	p.nready--
	p.held[t] = true
	p.mu.Unlock()
	select {
	case p.room <- struct{}{}:
	default:
	}
	switch done, err := p.copyOfDone(t); {
	case err != nil:
		t.m.NakWithDelay(time.Second) // the server is away: asked again later
		t.let()
		return nil, jobs.ErrLost
	case done:
		return nil, jobs.ErrLost
	}
	if err := t.fetch(); err != nil {
		t.Release()
		return nil, err
	}
	return t, nil
}

// Create starts writing the token name, a new job (tpipe put).
func (p *Place) Create(name string) (jobs.Pending, error) {
	return p.create(name, nuid.Next())
}

// CreateFrom starts writing the token name, an output of the job that
// holds from: its identity is the same for a redo of the job.
func (p *Place) CreateFrom(name string, from []jobs.Token) (jobs.Pending, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s", p.name, name)
	for _, t := range from {
		if t, ok := t.(*token); ok {
			fmt.Fprintf(h, "\x00%s\x00%s", t.p.name, t.id)
		}
	}
	return p.create(name, hex.EncodeToString(h.Sum(nil))[:32])
}

func (p *Place) create(name, id string) (*pending, error) {
	f, err := os.CreateTemp(p.n.scratch, "out-")
	if err != nil {
		return nil, err
	}
	return &pending{p: p, name: name, id: id, f: f}, nil
}

// Put publishes the whole token name at once: a failure's record,
// beside its job. The records of a failed place P go to the place
// P.records, so that P's own counts are its jobs (tpipe get of P takes
// both).
func (p *Place) Put(name string, write func(io.Writer) error) error {
	var b strings.Builder
	if err := write(&b); err != nil {
		return err
	}
	msg := nats.NewMsg(p.subject)
	if strings.HasSuffix(name, jobs.StderrSuffix) || strings.HasSuffix(name, jobs.StatusSuffix) {
		msg.Subject = p.n.addr.Stream + "." + subjectToken(p.name+RecordsSuffix)
	}
	msg.Header.Set(hName, name)
	msg.Header.Set(hID, nuid.Next())
	msg.Data = []byte(b.String())
	return p.n.retry(time.Now().Add(p.n.o.Patience), func(ctx context.Context) error {
		_, err := p.n.js.PublishMsg(ctx, msg)
		return err
	})
}

// Reap is JetStream's: a message whose lease ran out is delivered again.
func (p *Place) Reap() (int, error) { return 0, nil }

// Busy reports, for a place this process watches (an input of its
// stages), whether a job of it waits on the server to be fetched (the
// engine's listing shows only the jobs fetched) or is held by a worker
// anywhere (delivered, not acknowledged). A place this process only
// writes is never busy: its own writes are the jobs in flight upstream
// of it, and a reader downstream that died holds its jobs until somebody
// pulls them again (JetStream delivers an expired job again only to a
// pull), which may not be this run's business.
func (p *Place) Busy() (bool, error) {
	p.mu.Lock()
	watched := p.stopPump != nil
	p.mu.Unlock()
	if !watched {
		return false, nil
	}
	busy, err := p.occupied()
	if err != nil {
		if p.n.away(err) {
			return true, nil // asked again at the next look
		}
		return false, fmt.Errorf("place %s: %v", p.Addr(), err)
	}
	return busy, nil
}

// Close stops the fetching and gives back the messages held ready.
func (p *Place) Close() error {
	p.mu.Lock()
	stop, done := p.stopPump, p.pumpDone
	p.stopPump = nil
	p.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, ts := range p.ready {
		for _, t := range ts {
			t.m.Nak()
		}
		delete(p.ready, name)
	}
	p.nready = 0
	return nil
}

// token is a message a worker holds.
type token struct {
	p      *Place
	m      jetstream.Msg
	seq    uint64
	name   string
	id     string
	object string
	size   int64
	path   string
}

// fetch writes the token's bytes to its file.
func (t *token) fetch() error {
	t.path = filepath.Join(t.p.n.scratch, fmt.Sprintf("in-%s-%d", t.p.tok, t.seq))
	if t.object == "" {
		return os.WriteFile(t.path, t.m.Data(), 0o600)
	}
	// A large job: about a second a hundred MiB more than a small one.
	ctx, cancel := context.WithTimeout(context.Background(), t.p.n.o.Timeout+time.Duration(t.size>>20)*10*time.Millisecond)
	defer cancel()
	if err := t.p.n.objects.GetFile(ctx, t.object, t.path); err != nil {
		return fmt.Errorf("job %s: its bytes (object %s): %v", t.name, t.object, err)
	}
	return nil
}

func (t *token) Path() string      { return t.path }
func (t *token) Changed(bool) bool { return false } // a message never changes
func (t *token) Suspect()          {}
func (t *token) MoveToPath(string) error {
	return errors.New("failed jobs on NATS go to the failed place, not to paths")
}

// let forgets the token: no longer held, its file gone.
func (t *token) let() {
	t.p.mu.Lock()
	delete(t.p.held, t)
	t.p.mu.Unlock()
	if t.path != "" {
		os.Remove(t.path)
	}
}

// Done marks the job done in its place, then acknowledges its message
// (see the package's doc) and drops its object. The mark is published
// at once and the rest is the net's acker's, once the mark is stored,
// so that a worker does not wait a round trip per job: the message
// stays held (its lease renewed) until then.
func (t *token) Done(jobs.Place) (lost bool, err error) {
	n := t.p.n
	key := t.p.markKey(t.id)
	fut, err := n.js.PublishAsync(n.markSubject(key), []byte(n.o.Owner))
	if err != nil {
		fut = nil // stored by the acker, the slow way
	}
	if t.path != "" {
		os.Remove(t.path)
		t.path = ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false, fmt.Errorf("job %s of %s: done after the net was closed", t.name, t.p.Addr())
	}
	n.marking[key]++
	n.acks <- doneReq{t: t, fut: fut, key: key}
	return false, nil
}

// doneReq is a job whose mark was published: once the server has stored
// it, the job's message is acknowledged.
type doneReq struct {
	t   *token
	fut jetstream.PubAckFuture
	key string
}

// acker acknowledges the jobs done, in order, each once its mark is
// stored; a mark that cannot be stored within Patience leaves its job
// unacknowledged, to run again after the lease (its outputs are stored:
// their copies are dropped downstream).
func (n *Net) acker() {
	for r := range n.acks {
		ok := false
		if r.fut != nil {
			timer := time.NewTimer(n.o.Timeout)
			select {
			case <-r.fut.Ok():
				ok = true
			case <-r.fut.Err():
			case <-timer.C:
			}
			timer.Stop()
		}
		if !ok {
			ok = n.retry(time.Now().Add(n.o.Patience), func(ctx context.Context) error {
				_, err := n.marks.Put(ctx, r.key, []byte(n.o.Owner))
				return err
			}) == nil
		}
		n.mu.Lock()
		if n.marking[r.key]--; n.marking[r.key] <= 0 {
			delete(n.marking, r.key) // stored, or the job runs again
		}
		n.mu.Unlock()
		if ok {
			// An acknowledgement is not waited for (a lost one brings back
			// a copy, which is dropped), but the last of a burst is: then
			// the place is told, so that a run under --once that looks
			// whether it is quiet sees the server's counts without it.
			if len(n.acks) > 0 {
				r.t.m.Ack()
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
				r.t.m.DoubleAck(ctx)
				cancel()
				select {
				case r.t.p.notify <- struct{}{}:
				default:
				}
			}
			n.dropObject(r.t.object)
		} else {
			fmt.Fprintf(n.o.Log, "could not mark job %s done in %s: it runs again after the lease\n", r.t.name, r.t.p.Addr())
		}
		r.t.let()
	}
}

// Release gives the message back at once, for any worker.
func (t *token) Release() error {
	err := t.m.Nak()
	t.let()
	return err
}

// MoveTo publishes the token to the place q (a failed place) and
// acknowledges it here.
func (t *token) MoveTo(q jobs.Place) error {
	qp, ok := q.(*Place)
	if !ok {
		return fmt.Errorf("%s is not a place on NATS", q.Addr())
	}
	msg := nats.NewMsg(qp.subject)
	msg.Header = t.m.Headers()
	msg.Header.Del(jetstream.MsgIDHeader)
	msg.Header.Set(hName, t.name)
	msg.Header.Set(hID, t.id)
	msg.Data = t.m.Data()
	n := t.p.n
	if err := n.retry(time.Now().Add(n.o.Patience), func(ctx context.Context) error {
		_, err := n.js.PublishMsg(ctx, msg)
		return err
	}); err != nil {
		return err
	}
	t.m.Ack()
	t.let()
	return nil
}

// dropObject removes a job's object, once its message is acknowledged; a
// failure leaves it to the bucket (a leak, never a loss).
func (n *Net) dropObject(name string) {
	if name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
	defer cancel()
	n.objects.Delete(ctx, name)
}

// pending is a token being written, published by Commit.
type pending struct {
	p    *Place
	name string
	id   string
	f    *os.File
}

func (t *pending) Name() string                { return t.name }
func (t *pending) File() *os.File              { return t.f }
func (t *pending) Write(b []byte) (int, error) { return t.f.Write(b) }
func (t *pending) Place() jobs.Place           { return t.p }

// Abort drops the token's file.
func (t *pending) Abort() error {
	t.f.Close()
	return os.Remove(t.f.Name())
}

// message makes the token's message: its bytes inline, or, past what one
// message holds, in an object of the net (stored before the message).
func (t *pending) message() (*nats.Msg, error) {
	msg := nats.NewMsg(t.p.subject)
	msg.Header.Set(hName, t.name)
	msg.Header.Set(hID, t.id)
	fi, err := t.f.Stat()
	if err != nil {
		return nil, err
	}
	n := t.p.n
	if fi.Size() <= int64(n.inline) {
		msg.Data, err = os.ReadFile(t.f.Name())
		return msg, err
	}
	obj := t.p.tok + "/" + nuid.Next()
	err = n.retry(time.Now().Add(n.o.Patience), func(context.Context) error {
		if _, err := t.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout+time.Duration(fi.Size()>>20)*10*time.Millisecond)
		defer cancel()
		_, err := n.objects.Put(ctx, jetstream.ObjectMeta{Name: obj}, t.f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store job %s (%d bytes): %v", t.name, fi.Size(), err)
	}
	msg.Header.Set(hObject, obj)
	msg.Header.Set(hSize, strconv.FormatInt(fi.Size(), 10))
	return msg, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
