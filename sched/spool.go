package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/spool"
	"github.com/tpipe/tpipe/spool/place"
	"github.com/tpipe/tpipe/task"
)

// This file is the spool policy: the graph runs with every edge a place
// on disk (package spool), so that a run killed at any moment resumes
// where it stopped and a rerun redoes only what changed. It follows
// PipeFlow ("PipeFlow Engine", round-by-round segments), pmjq's places
// and Koji's causal hashes.
//
// A stage is a task, or the tasks of an external program, which run
// together. A stage of one stateless per-record task (task.PerRecord.Fresh) is
// a map: it runs on each segment of its input apart, on up to
// SpoolOptions.Workers goroutines, as soon as the segment is in its place,
// and each output segment is named after its input segment. Any other
// stage is whole-stream: it runs once, in a small graph like the serial
// policy's, reading its input places' segments in order as they come and
// cutting its output into segments again. Every stage whose outputs are
// not all complete on disk starts at once, and each waits only on the
// segments it reads, so the stages overlap as the tasks of a concurrent
// run do.
//
// Only what is needed runs: a stage whose output places are complete (each
// has its end token) is cached, and a stage whose readers are all cached
// is not needed, so a rerun of a finished graph reads its last place and
// nothing else. A reader that stops early (head) makes its writer stop
// too, as ErrReaderGone does in memory.

// DefaultSegment is the bytes of records in a segment when
// SpoolOptions.Segment is 0, chosen by measurement (go run ./bench
// -spool; bench/README.md): on a local disk 4M was the fastest of 64K to
// 16M for the log pipeline with fsync on and off, 64K the slowest
// everywhere (an fsync and a few files per segment). Smaller segments let
// a map start sooner and resume with less redone; larger ones cost fewer
// fsyncs and files.
const DefaultSegment = 4 << 20

// SpoolOptions configure the spool policy.
type SpoolOptions struct {
	// Dir is the spool. "" runs on a temporary directory under
	// Options.TempDir, removed after the run (tests, and the policy
	// table's promise that every policy runs every graph).
	Dir string
	// Segment is the bytes of records in a segment; 0 means
	// DefaultSegment.
	Segment int
	// NoSync skips fsync: faster, and a power loss may lose tokens the
	// run counted as written (a process crash does not).
	NoSync bool
	// Codec compresses the tokens the run writes; the zero value is
	// recfile.None, spool.DefaultCodec. Tokens of any codec are read.
	Codec recfile.Codec
	// Workers is how many map segments run at once; 0 means GOMAXPROCS.
	Workers int
	// AfterCommit, if set, is called after each token is committed;
	// tests kill the process there.
	AfterCommit func()
}

// SpoolStats describe a spooled run.
type SpoolStats struct {
	Dir           string `json:"dir"`
	Segment       int    `json:"segment"`
	Codec         string `json:"codec"` // of the tokens written
	TokensWritten int64  `json:"tokens_written"`
	BytesWritten  int64  `json:"bytes_written"` // on disk, compressed
	BytesRead     int64  `json:"bytes_read"`
}

// spoolStage is a stage of the run: tasks that run as one, with the edges
// they read and write from outside the stage, in task and port order. A
// map stage is a chain of map tasks, in order, that runs in one pass over
// each segment: the edges between them (virtual) are never written.
type spoolStage struct {
	tasks   []int
	ins     []int
	outs    []int
	outTask []int // the task that writes each of outs
	virtual []int // of a map stage: the edges inside its chain, in order
	isMap   bool
	content bool     // a task has no Ident: outputs named by content
	gens    []string // the outputs' causal hashes, when known before the run
	inPlace bool     // a file read in place: the stage never runs
	cached  bool     // every output complete on disk already
	run     bool     // to run: not cached, and a stage that runs reads it
	// taps are the standard errors of the stage's tasks, each once, in
	// task order; kept with its outputs when it runs, written again when
	// they are found cached (keepsStderr).
	taps []*task.Stderr
}

// spoolRun is one run of the spool policy.
type spoolRun struct {
	groupRunner
	so      SpoolOptions
	sp      *spool.Spool
	places  []string
	edges   []*spoolEdge
	stages  []*spoolStage
	stageOf []int // the stage of each task
	ins     [][]int
	outs    [][]int
	record  *spool.Record
	store   spoolStore    // what the plan reads of the spool: placeStore(edges)
	sem     chan struct{} // map jobs computing at once
	syncer  *spoolSyncer
	segRun  []atomic.Int64
	segHit  []atomic.Int64
	tokens  atomic.Int64
	written atomic.Int64
	read    atomic.Int64

	mu   sync.Mutex
	errs pipefail // the run's error, under mu
}

// runSpool is the spool policy.
func runSpool(ctx context.Context, g *graph.Graph, pl Plan, o Options) (st *Stats, err error) {
	so := SpoolOptions{}
	if o.Spool != nil {
		so = *o.Spool
	}
	if so.Segment <= 0 {
		so.Segment = DefaultSegment
	}
	if so.Workers <= 0 {
		so.Workers = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	r := &spoolRun{groupRunner: newGroupRunner(g, pl, o, Spool), so: so, places: spoolPlaces(g), sem: make(chan struct{}, so.Workers),
		segRun: make([]atomic.Int64, len(g.Tasks)), segHit: make([]atomic.Int64, len(g.Tasks))}
	detach := o.Live.Attach(r.sample)
	defer detach()
	defer func() {
		for i := range r.st.Tasks {
			r.st.Tasks[i].SegmentsRun = int(r.segRun[i].Load())
			r.st.Tasks[i].SegmentsCached = int(r.segHit[i].Load())
		}
		r.st.Spool = &SpoolStats{Dir: so.Dir, Segment: so.Segment, Codec: so.Codec.String(), TokensWritten: r.tokens.Load(), BytesWritten: r.written.Load(), BytesRead: r.read.Load()}
		r.st.Wall = time.Since(start)
		st = r.st
	}()
	if so.Dir == "" {
		dir, err := os.MkdirTemp(o.TempDir, "tpipe-spool-")
		if err != nil {
			return r.st, err
		}
		defer os.RemoveAll(dir)
		so.Dir, so.NoSync = dir, true
		r.so = so
	}
	r.sp, err = spool.Open(so.Dir, place.Options{NoSync: so.NoSync})
	if err != nil {
		return r.st, spoolDiskErr(so.Dir, err)
	}
	defer func() {
		if cerr := r.sp.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	defer func() {
		for _, e := range r.edges {
			if e.file != nil {
				e.file.Close()
			}
		}
	}()
	if err := r.open(); err != nil {
		return r.st, err
	}
	return r.st, r.run(ctx)
}

// open opens the places, checks the spool's Record against g's and
// writes it.
func (r *spoolRun) open() error {
	g := r.g
	rec := &spool.Record{Shape: spoolShape(g, r.places)}
	for _, t := range g.Tasks {
		rec.Tasks = append(rec.Tasks, spool.RecordTask{Name: t.Name, Ident: t.Ident})
	}
	for k, e := range g.Edges {
		rec.Places = append(rec.Places, spool.RecordPlace{Name: r.places[k], Edge: e.Name, From: g.Tasks[e.From.Task].Name, To: g.Tasks[e.To.Task].Name})
	}
	if err := r.sp.Check(rec); err != nil {
		return err
	}
	if err := r.sp.SetRecord(rec); err != nil {
		return &spool.DirError{Dir: r.sp.Dir(), Err: err}
	}
	// The places are opened at once: making one is four directories, each
	// near a millisecond on a busy disk, and a run waited for all of them
	// in a row. They come after the Record, which a directory with
	// places must have (spool.Open refuses one without).
	ps := make([]*place.Place, len(g.Edges))
	errs := make([]error, len(g.Edges))
	var wg sync.WaitGroup
	for k := range g.Edges {
		wg.Go(func() { ps[k], errs[k] = r.sp.Place(r.places[k]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return &spool.DirError{Dir: r.sp.Dir(), Err: err}
	}
	for k, p := range ps {
		r.edges = append(r.edges, newSpoolEdge(k, p))
	}
	r.record = rec
	r.store = placeStore(r.edges)
	return nil
}

// exit records task i's non-zero exit status; the rightmost task's is the
// run's (pipefail).
func (r *spoolRun) exit(i, code int) {
	t := r.g.Tasks[i]
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs.exit(t.Index, &TaskError{Task: t.Name, Index: t.Index, Err: task.Exit(code)})
	r.groupRunner.mu.Lock()
	r.st.Tasks[i].Status = code
	r.groupRunner.mu.Unlock()
}

// run runs every stage that must, at once, and waits for them.
func (r *spoolRun) run(ctx context.Context) error {
	if err := r.plan(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.syncer = newSpoolSyncer(r.so.Workers, func(err error) {
		if r.fail(err) {
			cancel(err)
		}
	})
	defer func() {
		for _, e := range r.edges {
			e.closeEarly()
		}
	}()
	var wg sync.WaitGroup
	for _, s := range r.stages {
		if !s.run {
			continue
		}
		wg.Go(func() {
			var err error
			if s.isMap {
				err = r.runMap(ctx, s)
			} else {
				err = r.runWhole(ctx, s)
			}
			if err == nil {
				r.markRan(s.tasks)
			}
			if err != nil && r.fail(err) {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := r.syncer.close(); err != nil {
		r.fail(&spool.DirError{Dir: r.sp.Dir(), Err: r.diskErr(err)})
	}
	r.mu.Lock()
	first := r.errs.first
	r.mu.Unlock()
	if first != nil {
		return first
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	live := map[string][]string{}
	for k, e := range r.edges {
		if e.virtual {
			live[r.places[k]] = []string{} // gc empties it
		} else if names := e.all(); len(names) > 0 {
			live[r.places[k]] = names
		} else if old, ok := r.record.Live[r.places[k]]; ok {
			live[r.places[k]] = old // not read this run: what the last one used
		}
	}
	r.record.Live = live
	if err := r.sp.SetRecord(r.record); err != nil {
		return &spool.DirError{Dir: r.sp.Dir(), Err: r.diskErr(err)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs.err()
}

// fail records a stage's error: an exit status is kept (the rightmost
// wins); anything else is a hard failure, and fail reports true for the
// first one, which stops the run.
func (r *spoolRun) fail(err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if te, _, ok := exitStatus(err); ok {
		r.errs.exit(te.Index, te)
		return false
	}
	return r.errs.fail(err)
}

// runWhole runs a whole-stream stage: once its inputs' causal hashes are
// known, it is either found cached or run in a small graph whose sources
// read its input places as their segments come and whose sinks cut its
// outputs into segments.
func (r *spoolRun) runWhole(ctx context.Context, s *spoolStage) error {
	gens := s.gens
	if gens == nil && !s.content && len(s.outs) > 0 {
		var in []string
		for _, k := range s.ins {
			h, err := r.edges[k].waitGen(ctx)
			if err != nil {
				return err
			}
			in = append(in, h)
		}
		gens = r.outGens(s, in)
		if cached, err := r.cached(s, gens); cached || err != nil {
			return err
		}
	}
	sinks := make(map[int]*spoolSink, len(s.outs))
	for j, k := range s.outs {
		sk := &spoolSink{r: r, e: r.edges[k], task: s.outTask[j]}
		if gens != nil {
			sk.gen = gens[j]
			sk.e.setGen(sk.gen)
		}
		sinks[k] = sk
	}
	keep := gens != nil && s.keepsStderr()
	if keep {
		for _, tap := range s.taps {
			tap.Keep(spoolStderrMax)
		}
	}
	err := r.runGroup(ctx, s.tasks, r.ins, r.outs, r.source, func(k int) (task.Func, error) {
		return sinks[k].run, nil
	})
	var errs []spool.Stderr
	if keep {
		for _, tap := range s.taps {
			b, lost := tap.Kept()
			errs = append(errs, spool.Stderr{Bytes: b, Lost: lost})
		}
	}
	_, status, ok := exitStatus(err)
	if err != nil && !ok {
		return err
	}
	if keep && slices.ContainsFunc(s.outs, func(k int) bool { return sinks[k].finished }) {
		// Before the end tokens: an end token on disk implies the stderr.
		e := r.edges[s.outs[0]]
		if werr := spool.WriteStderr(e.p, gens[0], errs); werr != nil {
			return r.taskErr(s.outTask[0], r.diskErr(werr))
		}
		e.setErrTok(spool.StderrName(gens[0]))
		r.afterCommit()
	}
	for _, k := range s.outs {
		if werr := sinks[k].finish(ctx, s.ins, status); werr != nil {
			i := sinks[k].task
			return &TaskError{Task: r.g.Tasks[i].Name, Index: r.g.Tasks[i].Index, Err: r.diskErr(werr)}
		}
	}
	return err
}

// source returns the task that reads the segments of edge k in order, as
// they are committed, until the edge is complete.
func (r *spoolRun) source(k int) task.Func {
	e, name := r.edges[k], r.g.Edges[k].Name
	return func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		if e.file != nil {
			// A file read in place, whole: the lines as '<' cuts them.
			size := e.bounds[len(e.bounds)-1]
			err := out.ScanFrom(io.NewSectionReader(e.file, 0, size), '\n')
			r.read.Add(size)
			if errors.Is(err, buffer.ErrReaderGone) {
				e.setGone()
			}
			return err
		}
		maxRec := p.MaxRecord()
		for n := 0; ; n++ {
			tok, ok, err := e.segment(ctx, n, out.Done())
			if errors.Is(err, buffer.ErrReaderGone) {
				e.setGone()
				return nil
			}
			if err != nil || !ok {
				return err
			}
			err = r.readSeg(e, n, tok, maxRec, func(rec []byte) error {
				if len(rec) > maxRec {
					return &record.TooLargeError{Size: len(rec), Max: maxRec, Limit: buffer.MaxRecordLimit}
				}
				return out.Write(rec)
			})
			if errors.Is(err, buffer.ErrReaderGone) {
				e.setGone()
				return err
			}
			if err != nil {
				return fmt.Errorf("read edge %s: %w", name, r.diskErr(err))
			}
		}
	}
}

// spoolSink cuts the records of one output of a whole-stream stage into
// segments of its place. Its fields are the sink task's until it returns.
type spoolSink struct {
	r        *spoolRun
	e        *spoolEdge
	task     int
	gen      string // the edge's causal hash; "" to name segments by content
	names    []string
	finished bool // every record was read: the edge is complete
}

func (sk *spoolSink) run(ctx context.Context, p *buffer.Ports) error {
	r, in := sk.r, p.In(0)
	var tw *spool.TokenWriter
	defer func() {
		if tw != nil {
			tw.Abort() // the run failed or the reader went: no part token
		}
	}()
	for {
		if sk.e.isGone() {
			return nil // the reader stopped: nobody wants the rest
		}
		rec, err := in.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if tw == nil {
			name := ""
			if sk.gen != "" {
				name = spool.SegName(len(sk.names), spool.Hash(sk.gen, strconv.Itoa(len(sk.names))))
			}
			if tw, err = spool.NewTokenWriter(sk.e.p, name, r.so.Codec); err != nil {
				return r.diskErr(err)
			}
		}
		if err := tw.Add(rec); err != nil {
			return r.diskErr(err)
		}
		if tw.Bytes() >= int64(r.so.Segment) {
			err := sk.commit(ctx, tw)
			tw = nil
			if err != nil {
				return err
			}
		}
	}
	if tw != nil {
		err := sk.commit(ctx, tw)
		tw = nil
		if err != nil {
			return err
		}
	}
	sk.finished = true
	return nil
}

// commit commits the segment tw holds as the next of the edge.
func (sk *spoolSink) commit(ctx context.Context, tw *spool.TokenWriter) error {
	r, k := sk.r, len(sk.names)
	name, err := tw.Finish(k)
	if err != nil {
		return r.diskErr(err)
	}
	sk.names = append(sk.names, name)
	if has, _ := sk.e.p.Has(name); has {
		// Made by a run that stopped before its end: the same bytes. A
		// token named by its content is then the cache's.
		if err := tw.Abort(); err != nil {
			return r.diskErr(err)
		}
		sk.e.commit(k, name)
		if sk.gen == "" {
			r.segHit[sk.task].Add(1)
		} else {
			r.segRun[sk.task].Add(1)
		}
		r.committed(tw)
		return nil
	}
	return r.handOver(ctx, sk.e, k, name, tw, sk.task, func() { r.segRun[sk.task].Add(1) })
}

// handOver gives finished token tw, segment k of edge e named name, to
// the edge's reader and to the syncer (see spoolsync.go); done runs once
// it is committed. A failure to commit it is task i's.
func (r *spoolRun) handOver(ctx context.Context, e *spoolEdge, k int, name string, tw *spool.TokenWriter, i int, done func()) error {
	f, err := tw.OpenWritten()
	if err != nil {
		tw.Abort()
		return r.diskErr(err)
	}
	e.publish(k, name, f)
	return r.syncer.commit(ctx, e, k, tw, func(err error) error {
		if err != nil {
			return r.taskErr(i, r.diskErr(err))
		}
		done()
		r.committed(tw)
		return nil
	})
}

// finish completes the edge if the sink read all of its records: it
// writes the end token (with the writer's exit status) once those of ins,
// the stage's inputs, are written (writeEnd).
func (sk *spoolSink) finish(ctx context.Context, ins []int, status int) error {
	if !sk.finished {
		return nil
	}
	gen := sk.gen
	if gen == "" {
		gen = spool.Hash(append([]string{"content"}, sk.names...)...)
	}
	return sk.r.writeEnd(ctx, sk.e, ins, gen, sk.names, status)
}

// writeEnd completes edge e, written by a stage that read ins: its reader
// learns it at once; its end token is written once the syncer has renamed
// every segment it names, so that an end token on disk always names
// segments that are there, and once the end tokens of ins are on disk, so
// that it implies theirs too. Without the second rule a crash could leave
// a reader's place complete and its writer's not: the rerun, finding the
// reader cached, would not run the writer, and the writer's exit status
// and stderr (in its end and stderr tokens) would be lost. An input whose
// reader stopped early (head) has no end token and is not waited for.
func (r *spoolRun) writeEnd(ctx context.Context, e *spoolEdge, ins []int, gen string, names []string, status int) error {
	e.complete(gen, names)
	e.pending.Wait()
	e.mu.Lock()
	lost := e.lost
	e.mu.Unlock()
	if lost {
		return nil // the run fails with the commit's error
	}
	for _, k := range ins {
		in := r.edges[k]
		if in.isGone() {
			continue
		}
		select {
		case <-in.ended:
		case <-ctx.Done():
			return context.Cause(ctx) // a writer failed: so does the run
		}
	}
	if err := spool.WriteEnd(e.p, gen, names, status); err != nil {
		return err
	}
	e.markEnded()
	r.syncer.synced(e.p)
	r.afterCommit()
	return nil
}

// committed counts a token written and calls the test hook.
func (r *spoolRun) committed(tw *spool.TokenWriter) {
	r.tokens.Add(1)
	r.written.Add(tw.Written())
	r.afterCommit()
}

func (r *spoolRun) afterCommit() {
	if r.so.AfterCommit != nil {
		r.so.AfterCommit()
	}
}

// runMap runs a map stage: each segment of its input, as it comes, on a
// goroutine of its own (at most SpoolOptions.Workers at once over the
// run), through the stage's chain of tasks, each with an instance of its
// per-record form; a segment whose output is in the place already is
// skipped.
func (r *spoolRun) runMap(ctx context.Context, s *spoolStage) error {
	in, out := r.edges[s.ins[0]], r.edges[s.outs[0]]
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		free  = make(chan []*task.PerRecord, r.so.Workers)
		busy  atomic.Int64
	)
	fail := func(err error) {
		once.Do(func() { first = err; cancel(err) })
	}
	start := time.Now()
	var err error
	n := 0
	for ; ; n++ {
		if h := in.peekGen(); h != "" {
			out.setGen(r.outGens(s, []string{h})[0])
		}
		var inName string
		var ok bool
		inName, ok, err = in.segment(ctx, n, out.goneCh())
		if errors.Is(err, buffer.ErrReaderGone) {
			in.setGone()
			err = nil
			ok = false
		}
		if err != nil || !ok {
			break
		}
		names := r.chainNames(s, n, inName)
		outName := names[len(names)-1]
		if has, _ := out.p.Has(outName); has {
			out.commit(n, outName)
			r.segHit[s.outTask[0]].Add(1)
			continue
		}
		select {
		case r.sem <- struct{}{}:
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
		if err != nil {
			break
		}
		k := n
		wg.Go(func() {
			t0 := time.Now()
			tw, counts, err := r.mapSegment(s, free, in, k, inName, outName)
			busy.Add(int64(time.Since(t0)))
			<-r.sem // the disk's work is the syncer's: another segment computes meanwhile
			if err == nil {
				err = r.commitMap(ctx, s, out, k, tw, counts)
			}
			if err != nil {
				fail(err)
			}
		})
	}
	wg.Wait()
	r.groupRunner.mu.Lock()
	for _, i := range s.tasks {
		// The tasks of a chain share its time: they ran as one loop.
		ts := &r.st.Tasks[i]
		ts.Busy = time.Duration(busy.Load()) / time.Duration(len(s.tasks))
		ts.Blocked = max(0, time.Since(start)-ts.Busy)
	}
	r.groupRunner.mu.Unlock()
	if first != nil {
		return first
	}
	if err != nil {
		return err
	}
	if out.isGone() || !in.isDone() {
		return nil
	}
	gen := r.outGens(s, []string{in.peekGen()})[0]
	names := make([]string, n)
	for k := range names {
		seg := r.chainNames(s, k, in.name(k))
		names[k] = seg[len(seg)-1]
	}
	if err := r.writeEnd(ctx, out, s.ins, gen, names, 0); err != nil {
		return r.taskErr(s.outTask[0], r.diskErr(err))
	}
	return nil
}

// mapSegment runs the chain of map stage s over segment inName of in and
// returns its output, to be committed as outName (commitMap), and the
// records and bytes of each of the chain's virtual edges. free holds
// instances of the chain's per-record forms not in use. An error is a
// *TaskError of the task that failed (the last one for a failure to
// write); the token is then dropped.
func (r *spoolRun) mapSegment(s *spoolStage, free chan []*task.PerRecord, in *spoolEdge, k int, inName, outName string) (*spool.TokenWriter, [][2]int64, error) {
	var recs []*task.PerRecord
	select {
	case recs = <-free:
	default:
		for _, i := range s.tasks {
			recs = append(recs, r.g.Tasks[i].Rec.Fresh())
		}
	}
	defer func() {
		select {
		case free <- recs:
		default:
		}
	}()
	last := s.outTask[0]
	tw, err := spool.NewTokenWriter(r.edges[s.outs[0]].p, outName, r.so.Codec)
	if err != nil {
		return nil, nil, r.taskErr(last, r.diskErr(err))
	}
	maxRec := r.o.MaxRecord
	if maxRec == 0 {
		maxRec = buffer.DefaultMaxRecord
	}
	// The chain from its end: feed[j] takes a record into task j, whose
	// records go on to feed[j+1], the last task's into the token. counts
	// are the records and bytes of the chain's virtual edges.
	counts := make([][2]int64, len(s.virtual))
	feed := make([]task.Emit, len(recs)+1)
	feed[len(recs)] = func(b []byte) error {
		if err := tw.Add(b); err != nil {
			return &chainErr{len(recs) - 1, err}
		}
		return nil
	}
	for j := len(recs) - 1; j >= 0; j-- {
		rec, next := recs[j], feed[j+1]
		if j < len(recs)-1 {
			c := &counts[j]
			next = func(b []byte) error {
				c[0]++
				c[1] += int64(len(b))
				return feed[j+1](b)
			}
		}
		feed[j] = func(b []byte) error {
			var err error
			if rec.Keep != nil {
				if !rec.Keep(b) {
					return nil
				}
				err = next(b)
			} else {
				err = rec.Each(b, next)
			}
			if _, ok := err.(*chainErr); err != nil && !ok {
				err = &chainErr{j, err}
			}
			return err
		}
	}
	// A stateless form's Start and End emit nothing (task.PerRecord.Fresh);
	// they run around each segment, which is a stream of its own.
	for j, rec := range recs {
		if err == nil && rec.Start != nil {
			if err = rec.Start(errEmit); err != nil {
				err = &chainErr{j, err}
			}
		}
	}
	if err == nil {
		err = r.readSeg(in, k, inName, maxRec, feed[0])
	}
	for j, rec := range recs {
		if err == nil && rec.End != nil {
			if err = rec.End(errEmit); err != nil {
				err = &chainErr{j, err}
			}
		}
	}
	if err != nil {
		tw.Abort()
		i := s.tasks[0] // reading the input fails the first task
		var ce *chainErr
		if errors.As(err, &ce) {
			i, err = s.tasks[ce.j], ce.err
		}
		return nil, nil, r.taskErr(i, r.diskErr(err))
	}
	return tw, counts, nil
}

// commitMap hands tw, the output of segment k of map stage s, over to out
// (handOver), and once it is committed counts it with the records of the
// chain's virtual edges.
func (r *spoolRun) commitMap(ctx context.Context, s *spoolStage, out *spoolEdge, k int, tw *spool.TokenWriter, counts [][2]int64) error {
	last := s.outTask[0]
	name, err := tw.Finish(k)
	if err != nil {
		return r.taskErr(last, r.diskErr(err))
	}
	return r.handOver(ctx, out, k, name, tw, last, func() {
		r.groupRunner.mu.Lock()
		for j, c := range counts {
			e := &r.st.Edges[s.virtual[j]]
			e.Records += c[0]
			e.Bytes += c[1]
		}
		e := &r.st.Edges[out.k]
		e.Records += tw.Records()
		e.Bytes += tw.Bytes()
		r.groupRunner.mu.Unlock()
		for _, i := range s.tasks {
			r.segRun[i].Add(1)
		}
	})
}
