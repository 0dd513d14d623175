package natsq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tpipe/tpipe/spool/jobs"
)

// The ends of a net outside the engine: put sends jobs in, get takes the
// finished ones out, and the counts say where the jobs are.

// Put sends the job name with the bytes of r into place p, a new job,
// and returns once the server has stored it.
func (p *Place) PutJob(name string, r io.Reader) error {
	t, err := p.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(t, r); err != nil {
		t.Abort()
		return err
	}
	return p.n.Commit([]jobs.Pending{t}, nil)
}

// GetOptions configure Get.
type GetOptions struct {
	// Once returns when no job is waiting or held anywhere in the net.
	Once bool
	// NoSync skips the fsync of each file and of dir.
	NoSync bool
	// Got, if set, is told each job written.
	Got func(name string)
	// Recheck is how often the net is looked at under Once; 0 means 250ms.
	Recheck time.Duration
}

// Get writes each job of place p to dir/NAME (a temporary name, synced,
// then renamed), then marks it done and acknowledges it: a job comes out
// once, whatever copies of it a redo upstream made. It returns how many
// jobs it wrote when ctx is done, or under Once when the net is quiet.
func (p *Place) Get(ctx context.Context, dir string, o GetOptions) (int, error) {
	removeStale(dir)
	c, err := p.Watch(ctx, jobs.WatchConfig{})
	if err != nil {
		return 0, err
	}
	defer p.Close()
	recheck := max(o.Recheck, 250*time.Millisecond)
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	got := 0
	for {
		l, _ := p.List()
		for _, name := range l.Ready {
			t, err := p.Take(name, false)
			if errors.Is(err, jobs.ErrLost) {
				continue
			}
			if err != nil {
				return got, err
			}
			if err := save(t.Path(), filepath.Join(dir, name), o.NoSync); err != nil {
				t.Release()
				return got, fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
			}
			if _, err := t.Done(nil); err != nil {
				return got, err
			}
			got++
			if o.Got != nil {
				o.Got(name)
			}
		}
		if len(l.Ready) > 0 {
			continue
		}
		if o.Once {
			// The pulls bring the next jobs in well under this; the look
			// at the whole net is for when none come.
			t := time.NewTimer(50 * time.Millisecond)
			select {
			case <-c:
				t.Stop()
				continue
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return got, nil
			}
			busy, err := p.n.Busy()
			if p.parked() {
				busy, err = p.occupied() // nothing moves into a failed place but failures
			}
			if err != nil {
				return got, err
			}
			if !busy {
				if l, _ := p.List(); len(l.Ready) == 0 {
					return got, nil
				}
				continue
			}
		}
		select {
		case <-ctx.Done():
			return got, nil
		case <-c:
		case <-tick.C:
		}
	}
}

// removeStale removes from dir the temporary files of gets of this host
// that died while they wrote them (.NAME.get-PID-*, PID gone): their jobs
// were not acknowledged, and come out again.
func removeStale(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, ".*.get-*-*"))
	for _, name := range names {
		f := strings.Split(filepath.Base(name), ".get-")
		pid, err := strconv.Atoi(strings.Split(f[len(f)-1], "-")[0])
		if err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
			os.Remove(name)
		}
	}
}

// save copies the file from into the file to, whole: under a temporary
// name in to's folder, synced, renamed, and the folder synced.
func save(from, to string, noSync bool) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(to), fmt.Sprintf(".%s.get-%d-", filepath.Base(to), os.Getpid()))
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Chmod(0o644) // (CreateTemp's 0600 is for a file in progress)
	}
	if err == nil && !noSync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), to)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if noSync {
		return nil
	}
	d, err := os.Open(filepath.Dir(to))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Count is where the jobs of one place are.
type Count struct {
	Place       string
	Waiting     int // stored, not yet delivered to a worker
	InFlight    int // delivered, not acknowledged
	Done        int // marked done (within MarkAge)
	Failed      int // in the place's failed place
	Redelivered int // in flight after a delivery before (a lease ran out)
	Dropped     int // copies of done jobs dropped by this process
}

// Counts returns the counts of every place of the net that has a
// consumer, sorted by name. They come from the consumers (waiting, in
// flight, redelivered) and from the marks (done), never from the stream's
// message count, which a server that restarts can get wrong.
func (n *Net) Counts(ctx context.Context) ([]Count, error) {
	var out []Count
	lister := n.stream.ListConsumers(ctx)
	for info := range lister.Info() {
		tok, ok := strings.CutPrefix(info.Name, "tpipe_")
		if !ok {
			continue
		}
		name, ok := untoken(tok)
		if !ok {
			continue
		}
		c := Count{Place: name, Waiting: int(info.NumPending), InFlight: n.inFlight(ctx, info, tok), Redelivered: info.NumRedelivered}
		c.Done = n.subjects(ctx, "$KV."+"tpipe_marks_"+n.addr.Stream+"."+tok+".>")
		c.Failed = n.count(ctx, n.addr.Stream+"."+subjectToken(name+".failed"))
		n.mu.Lock()
		if p := n.places[name]; p != nil {
			p.mu.Lock()
			c.Dropped = p.dropped
			p.mu.Unlock()
		}
		n.mu.Unlock()
		out = append(out, c)
	}
	if err := lister.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// subjects counts the subjects of the marks bucket matching filter: one
// per job done.
func (n *Net) subjects(ctx context.Context, filter string) int {
	s, err := n.js.Stream(ctx, "KV_tpipe_marks_"+n.addr.Stream)
	if err != nil {
		return 0
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return 0
	}
	return len(info.State.Subjects)
}

// count counts the messages of the net's stream on subject.
func (n *Net) count(ctx context.Context, subject string) int {
	info, err := n.stream.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0
	}
	return int(info.State.Subjects[subject])
}

// Busy reports whether a job waits or is held anywhere in the net (but
// its failed places, where jobs are parked for a person): some
// consumer of it has messages pending or unacknowledged. The consumers
// are looked at one after the other, so a job could move from a place
// not yet looked at to one already seen; a job moves by a publish, so
// the stream's last sequence, the same before and after, says none did.
func (n *Net) Busy() (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
	defer cancel()
	last := func() (uint64, error) {
		info, err := n.stream.Info(ctx)
		if err != nil {
			return 0, err
		}
		return info.State.LastSeq, nil
	}
	before, err := last()
	if err != nil {
		return false, err
	}
	lister := n.stream.ListConsumers(ctx)
	busy := false
	for info := range lister.Info() {
		tok, ok := strings.CutPrefix(info.Name, "tpipe_")
		name, _ := untoken(tok)
		if !ok || parked(name) || busy {
			continue
		}
		if busy, err = n.holds(ctx, info, tok); err != nil {
			return false, err
		}
	}
	if err := lister.Err(); err != nil {
		return false, err
	}
	after, err := last()
	if err != nil {
		return false, err
	}
	return busy || before != after, nil
}

// Inspect returns the counts of the place at addr (an address Open
// takes), for the metrics.
func (n *Net) Inspect(addr string) (Count, error) {
	p, err := n.OpenPlace(addr)
	if err != nil {
		return Count{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.o.Timeout)
	defer cancel()
	c := Count{Place: p.name}
	if p.failed() {
		c.Waiting = n.count(ctx, p.subject)
		return c, nil
	}
	info, err := p.info(ctx)
	if err != nil {
		return c, err
	}
	c.Waiting, c.InFlight, c.Redelivered = int(info.NumPending), n.inFlight(ctx, info, p.tok), info.NumRedelivered
	c.Failed = n.count(ctx, n.addr.Stream+"."+subjectToken(p.name+".failed"))
	return c, nil
}

// parked reports whether the place name holds failed jobs or their
// records: jobs that wait for a person, not for a worker.
func parked(name string) bool {
	return strings.HasSuffix(name, ".failed") || strings.HasSuffix(name, ".failed"+RecordsSuffix)
}

func (p *Place) parked() bool { return parked(p.name) }

// occupied reports whether the place has a job waiting or delivered and not
// acknowledged.
func (p *Place) occupied() (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.n.o.Timeout)
	defer cancel()
	info, err := p.info(ctx)
	if err != nil {
		return false, err
	}
	return p.n.holds(ctx, info, p.tok)
}

// holds reports whether the consumer of info (of the place whose subject
// token is tok) has a job waiting, or delivered and not acknowledged.
//
// Its counts alone cannot say so. Debian's nats-server 2.9.10, killed and
// started again on its store, may keep counting as unacknowledged
// messages it never delivers again, gone from the stream or brought back
// from behind a lost acknowledgement, and then the count and the ack
// floor stay where they are for good (the crash test saw 4 to 19 of them
// in a place of 1,500 jobs all done). So when nothing waits and the count
// of unacknowledged ones is not 0, the place's messages after the ack
// floor are read: one whose identity is marked done in the place is a
// leftover copy; any other is a job that a worker holds. (Nothing is
// removed here: a message deleted while a consumer counts it is what
// stalls a consumer of these servers. The guard of a place's pump makes
// its consumer again when it stays so.)
func (n *Net) holds(ctx context.Context, info *jetstream.ConsumerInfo, tok string) (bool, error) {
	switch {
	case info.NumPending > 0:
		return true, nil
	case info.NumAckPending == 0:
		return false, nil
	}
	return n.heldAfterFloor(ctx, info, tok)
}

// maxLeftovers bounds the leftover copies one look reads past the ack
// floor; past it, the place is taken as busy until the next look.
const maxLeftovers = 256

// heldAfterFloor reports whether a message of the consumer's subject
// after its ack floor is not marked done in the place of tok: a job held
// (or waiting).
func (n *Net) heldAfterFloor(ctx context.Context, info *jetstream.ConsumerInfo, tok string) (bool, error) {
	seq := info.AckFloor.Stream + 1
	for range maxLeftovers {
		m, err := n.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(info.Config.FilterSubject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		id := m.Header.Get(hID)
		if id == "" {
			id = fmt.Sprintf("seq-%d", m.Sequence) // as parse names it
		}
		_, err = n.marks.Get(ctx, tok+"."+id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		seq = m.Sequence + 1
	}
	return true, nil
}

// inFlight is the number of the consumer's messages delivered and not
// acknowledged, but 0 when nothing waits and every message after its ack
// floor is a copy of a job done (see holds): a count the server will not
// bring down by itself.
func (n *Net) inFlight(ctx context.Context, info *jetstream.ConsumerInfo, tok string) int {
	if info.NumPending > 0 || info.NumAckPending == 0 {
		return info.NumAckPending
	}
	if held, err := n.heldAfterFloor(ctx, info, tok); err == nil && !held {
		return 0
	}
	return info.NumAckPending
}
