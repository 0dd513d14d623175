package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/tpipe/tpipe/front/metrics"
	"github.com/tpipe/tpipe/front/stages"
	"github.com/tpipe/tpipe/front/status"
	"github.com/tpipe/tpipe/internal/say"
	"github.com/tpipe/tpipe/internal/visible"
	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/jobs"
	"github.com/tpipe/tpipe/spool/natsq"
	"github.com/tpipe/tpipe/spool/place"
)

// The job commands on NATS JetStream: the same commands as on folders,
// given nats://HOST:PORT/NAME instead of a folder (package natsq).

// natsNote is what serve and get say once under --fsync on: the server's
// store, not tpipe, decides what a power loss keeps.
const natsNote = "note: a job the NATS server acknowledged survives a crash of tpipe or of the server; a power loss too only if the server syncs at once (sync_interval: always in its configuration; by default every 2 minutes)"

// dialNet connects to the net of the nats:// address arg for prog; on an
// error it says one line and returns status 2 (nothing was consumed).
func dialNet(ctx context.Context, prog, arg string, o natsq.Options, stderr io.Writer) (*natsq.Net, natsq.Addr, int) {
	a, err := natsq.Parse(arg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return nil, a, 2
	}
	o.Log = &prefixWriter{w: stderr, prefix: prog + ": "}
	n, err := natsq.Dial(ctx, a, o)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(say.OneLine(err.Error())))
		return nil, a, 2
	}
	return n, a, 0
}

// natsOptions are the options of a worker's connection, from its flags.
func (f *jobFlags) natsOptions() natsq.Options {
	return natsq.Options{Lease: f.o.Lease, Prefetch: f.o.Workers, Create: true, Owner: f.o.Host}
}

// serveNATS is `tpipe serve [flags] nats://HOST:PORT/NAME 'PIPELINE'`.
func (f *jobFlags) serveNATS(ctx context.Context, addr, src string, stderr io.Writer) int {
	const prog = "tpipe serve"
	if f.status != "" {
		return pmjqUsageError(stderr, prog, "--status writes files in a folder; on NATS, tpipe status %s shows the places", addr)
	}
	a, err := natsq.Parse(addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 2
	}
	if a.Place != "" {
		return pmjqUsageError(stderr, prog, "serve takes a net, %s, not a place of it", a.Net())
	}
	net, err := stages.NewNet("/"+a.Stream, src, f.cfg)
	if err != nil {
		var ne *stages.NetError
		if errors.As(err, &ne) {
			fmt.Fprintf(stderr, "tpipe %s\n", visible.Controls(ne.Error()))
			return 2
		}
		r := runner.New(runner.Config{Stderr: stderr})
		defer r.Close()
		return r.Report(src, err)
	}
	if err := missingProgram(src, f.cfg); err != nil {
		return badPipeline(stderr, prog, "PIPELINE", src, "nats://HOST:PORT/NAME 'PIPELINE'", err)
	}
	sts, status := f.only2(prog, net.Stages, stderr)
	if status != 0 {
		return status
	}
	if f.explain {
		return f.explainNATS(sts, a)
	}
	n, _, status := dialNet(ctx, prog, addr, f.natsOptions(), stderr)
	if status != 0 {
		return status
	}
	defer n.Close()
	other, err := n.ServeWith(strings.TrimSpace(src), f.replace)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %s\n", prog, a, visible.Controls(say.OneLine(err.Error())))
		return 1
	}
	if other != "" {
		fmt.Fprintf(stderr, "%s: net %s is served with the pipeline %s, not this one: two pipelines on one net mix their results (another net name; or, once its workers are stopped, --replace)\n", prog, a, visible.Controls(strconv.Quote(other)))
		return 2
	}
	return f.runNATS(ctx, n, sts, stderr)
}

// only2 keeps the stages --only names (all without it), with the flags'
// retries.
func (f *jobFlags) only2(prog string, all []jobs.Stage, stderr io.Writer) ([]jobs.Stage, int) {
	sts := all
	if f.only != "" {
		var names []string
		sts = nil
		for _, st := range all {
			names = append(names, st.Name)
			if st.Name == f.only {
				sts = append(sts, st)
			}
		}
		if sts == nil {
			fmt.Fprintf(stderr, "%s: --only %s: no such stage (the stages: %s)\n", prog, visible.Controls(f.only), strings.Join(names, ", "))
			return nil, 2
		}
	}
	for i := range sts {
		sts[i].Retries = f.retries
	}
	return sts, 0
}

// pmjqNATS is `tpipe pmjq nats://.../NAME/IN 'FILTER' nats://.../NAME/OUT...`.
func (f *jobFlags) pmjqNATS(ctx context.Context, rest []string, filter jobs.Func, stderr io.Writer) int {
	const prog = "tpipe pmjq"
	in, err := natsq.Parse(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 2
	}
	if in.Place == "" {
		return pmjqUsageError(stderr, prog, "%s is a net: give the place of its jobs, %s/in", rest[0], rest[0])
	}
	st := jobs.Stage{Name: "pmjq", In: []string{in.String()}, Retries: f.retries, Run: filter}
	var outs []string
	for _, o := range rest[2:] {
		a, err := natsq.Parse(o)
		switch {
		case !natsq.IsAddr(o):
			return pmjqUsageError(stderr, prog, "OUTDIR %s is a folder and INDIR is on NATS: one run uses one net", o)
		case err != nil:
			fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
			return 2
		case a.Net() != in.Net():
			return pmjqUsageError(stderr, prog, "%s is not in the net of %s: one run uses one net (one stream)", o, rest[0])
		case a.Place == "":
			return pmjqUsageError(stderr, prog, "%s is a net: give a place of it, %s/out", o, o)
		case a.Place == in.Place:
			return pmjqUsageError(stderr, prog, "OUT %s is IN: every output would be a new job", o)
		}
		outs = append(outs, a.String())
	}
	st.Out = [][]string{outs}
	if f.status != "" {
		return pmjqUsageError(stderr, prog, "--status writes files in a folder; on NATS, tpipe status %s shows the places", in.Net())
	}
	if f.explain {
		return f.explainNATS([]jobs.Stage{st}, in)
	}
	n, _, status := dialNet(ctx, prog, rest[0], f.natsOptions(), stderr)
	if status != 0 {
		return status
	}
	defer n.Close()
	return f.runNATS(ctx, n, []jobs.Stage{st}, stderr)
}

// explainNATS prints the stages and their places on NATS.
func (f *jobFlags) explainNATS(sts []jobs.Stage, a natsq.Addr) int {
	w := f.stdout
	fmt.Fprintf(w, "stages (upstream first), on the net %s (stream %s, subjects %s.PLACE):\n", a.Net(), a.Stream, a.Stream)
	base := func(p string) string { return filepath.Base(p) }
	for _, st := range sts {
		var ins, outs []string
		for _, p := range st.In {
			ins = append(ins, base(p))
		}
		for _, ps := range st.Out {
			for _, p := range ps {
				outs = append(outs, base(p))
			}
		}
		fmt.Fprintf(w, "  %s: %s -> %s; failed jobs to %s.failed\n", visible.Controls(st.Name), strings.Join(ins, ", "), strings.Join(outs, ", "), strings.Join(ins, ".failed, "))
	}
	fmt.Fprintf(w, "taken: each place's durable consumer hands a job to one worker at a time; a worker renews its lease (%v) while it holds the job, and a job whose worker died is delivered again after it\n", f.o.Lease)
	fmt.Fprintf(w, "delivery: %s; a job's mark of done, kept %v, drops a redo's second copy; %d workers in this process\n", f.o.Delivery, natsq.MarkAge, f.o.Workers)
	return 0
}

// runNATS runs the stages on the net n, as run does on folders.
func (f *jobFlags) runNATS(ctx context.Context, n *natsq.Net, sts []jobs.Stage, stderr io.Writer) int {
	prog := f.form.prog()
	if !f.cfg.NoSync && !f.o.NoSync {
		fmt.Fprintf(stderr, "%s: %s\n", prog, natsNote)
	}
	var seen []status.Stage
	for _, st := range sts {
		s := status.Stage{Name: st.Name, Inputs: st.In}
		for _, ps := range st.Out {
			s.Outputs = append(s.Outputs, ps...)
		}
		seen = append(seen, s)
	}
	var places []string
	for _, st := range sts {
		for _, p := range append(append([]string(nil), st.In...), st.FailedDirs()...) {
			places = append(places, p)
		}
		for _, ps := range st.Out {
			places = append(places, ps...)
		}
	}
	// Every place is opened now: its consumer made, so that its jobs are
	// counted from the start, and a server that refuses one is said
	// before any job is taken.
	var addrs []string
	for _, p := range places {
		pl, err := n.OpenPlace(p)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
			return 2
		}
		addrs = append(addrs, pl.Addr())
	}
	inspect := func(addr string) (metrics.PlaceCounts, error) {
		c, err := n.Inspect(addr)
		return metrics.PlaceCounts{Tokens: c.Waiting, Claims: c.InFlight, Aside: c.Failed}, err
	}
	obs, stop, err := f.observeWith(ctx, place.Owner{}, 0, seen, addrs, inspect, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 1
	}
	defer stop()
	f.o.Stderr, f.o.Observer, f.o.Places = stderr, obs, n
	counts, err := jobs.Run(ctx, sts, f.o)
	return f.runStatus(ctx, counts, err, stderr)
}

// runStatus is the command's status after a run of the engine, on folders
// or on NATS (see run), with its last line.
func (f *jobFlags) runStatus(ctx context.Context, n jobs.Counts, err error, stderr io.Writer) int {
	prog := f.form.prog()
	var se *runner.SignalError
	failed := n.Failed > 0
	if f.form == formPmjq1 {
		failed = n.Kept > 0 // a job moved to its --error names is dealt with, as in pmjq 1.0
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(say.OneLine(err.Error())))
		return 1
	case errors.As(context.Cause(ctx), &se):
		return se.Status()
	case ctx.Err() != nil:
		return runner.StatusInterrupted
	case failed:
		fmt.Fprintf(stderr, "%s: %d %s done, %d failed\n", prog, n.Done, say.Plural(n.Done, "job"), n.Failed)
		return 1
	case n.Blocked > 0:
		fmt.Fprintf(stderr, "%s: %d %s done; %d could not be taken (see above)\n", prog, n.Done, say.Plural(n.Done, "job"), n.Blocked)
		return 1
	}
	return 0
}

// putNATS is `tpipe put nats://HOST:PORT/NAME[/PLACE] FILE...` (and
// --name N for stdin): each job is stored (its publish acknowledged)
// before the next is sent; the status is 0 once all are.
func putNATS(addr, name string, create bool, files []string, stdin io.Reader, stderr io.Writer) int {
	const prog = "tpipe put"
	n, a, status := dialNet(context.Background(), prog, addr, natsq.Options{Create: true}, stderr)
	if status != 0 {
		return status
	}
	defer n.Close()
	if a.Place == "" {
		a.Place = "in" // serve's intake
	} else if served, err := n.Served(a.Place); err == nil && !served && !create {
		fmt.Fprintf(stderr, "%s: %s: no worker ever served place %s of net %s (a typo? serve's jobs go to %s/in; --create sends it anyway)\n", prog, addr, visible.Controls(a.Place), a.Stream, a.Net())
		return 2
	}
	p, err := n.OpenPlace(a.String())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 2
	}
	// The jobs go in batches, their publishes in flight together: put
	// waits for the server once a batch, not once a job.
	status = 0
	var batch []jobs.Pending
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := n.Commit(batch, nil); err != nil {
			for _, t := range batch {
				fmt.Fprintf(stderr, "%s: %s/%s: not stored: %s\n", prog, a, visible.Controls(t.Name()), visible.Controls(say.OneLine(err.Error())))
				t.Abort()
			}
			status = 1
		}
		batch = batch[:0]
	}
	for _, file := range files {
		job := name
		if job == "" {
			job = filepath.Base(file)
		}
		t, err := putNATSOne(p, file, job, name != "", stdin)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s/%s: %s\n", prog, a, visible.Controls(job), visible.Controls(err.Error()))
			status = 1
			continue
		}
		if batch = append(batch, t); len(batch) == putBatch {
			flush()
		}
	}
	flush()
	return status
}

// putBatch is how many jobs put sends before it waits for the server.
const putBatch = 64

// putNATSOne writes file ("-": stdin) as the job name of p, to be
// committed.
func putNATSOne(p *natsq.Place, file, name string, given bool, stdin io.Reader) (jobs.Pending, error) {
	fix := "; give --name"
	if given {
		fix = "; give another --name"
	}
	if err := place.ValidName(name); err != nil {
		return nil, fmt.Errorf("%s%s", nameReason(err), fix)
	}
	src := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, errors.New(fileError(err))
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, errors.New("is a folder, not a job")
		}
		src = f
	}
	t, err := p.Create(name)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(t, src); err != nil {
		t.Abort()
		return nil, errors.New(fileError(err))
	}
	return t, nil
}

const getUsage = `usage: tpipe get [flags] nats://HOST:PORT/NAME[/PLACE] DIR

Takes the finished jobs out of the net NAME on NATS (those of its place
out, where tpipe serve puts its results, or of PLACE; a failed place, such
as in.failed, gives its jobs with NAME.stderr and NAME.status beside each,
as on folders): each is written to
DIR/<the job's name> under a temporary name, synced and renamed, and only
then acknowledged, so a job is never lost between the two; a second copy
of a job (a redo upstream after a worker died) is dropped, not written
twice. Without --once it goes on until interrupted.

flags:
`

// getCommand is `tpipe get [--once] nats://HOST:PORT/NAME DIR`.
func getCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const prog = "tpipe get"
	fset := flag.NewFlagSet(prog, flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	once := fset.Bool("once", false, "exit when no job is waiting or in flight anywhere in the net")
	lease := fset.Duration("lease", time.Minute, "a job not renewed for `D` goes back to the net")
	noSync := fset.Bool("no-sync", false, "do not fsync each file and DIR: faster; a power cut may lose the last ones")
	verbose := fset.Bool("v", false, "print each job's name as it is written")
	pos, err := parseInterspersed(fset, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, getUsage)
		printFlags(stdout, fset)
		return 0
	}
	if err != nil {
		return pmjqUsageError(stderr, prog, "%s", durationHint(err))
	}
	if len(pos) != 2 {
		return pmjqUsageError(stderr, prog, "want nats://HOST:PORT/NAME DIR, got %d %s", len(pos), say.Plural(len(pos), "argument"))
	}
	if !natsq.IsAddr(pos[0]) {
		return pmjqUsageError(stderr, prog, "%s is not a nats:// address: get takes jobs out of a net on NATS (on folders the results are the files of DIR/out)", pos[0])
	}
	if *lease < time.Second {
		return pmjqUsageError(stderr, prog, "--lease %v: want at least 1s", *lease)
	}
	dir := pos[1]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			fmt.Fprintf(stderr, "%s: %s is not a folder\n", prog, visible.Controls(dir))
		} else {
			fmt.Fprintf(stderr, "%s: %s\n", prog, fileError(err))
		}
		return 2
	}
	ctx, e := exitOn(ctx, exitSignals...)
	defer e.stop()
	n, a, status := dialNet(ctx, prog, pos[0], natsq.Options{Lease: *lease, Prefetch: 64}, stderr)
	if status != 0 {
		return status
	}
	defer n.Close()
	if a.Place == "" {
		a.Place = "out"
	}
	p, err := n.OpenPlace(a.String())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		return 2
	}
	if !*noSync {
		fmt.Fprintf(stderr, "%s: %s\n", prog, natsNote)
	}
	o := natsq.GetOptions{Once: *once, NoSync: *noSync}
	if *verbose {
		o.Got = func(name string) { fmt.Fprintln(stdout, visible.Controls(name)) }
	}
	var records *natsq.Place
	if strings.HasSuffix(a.Place, ".failed") {
		// A failed place's records (NAME.stderr, NAME.status) are a place
		// beside it: they come out too, into the same folder.
		if records, err = n.OpenPlace(a.String() + natsq.RecordsSuffix); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
			return 2
		}
	}
	got, err := p.Get(ctx, dir, o)
	if records != nil && err == nil {
		o.Once = true
		var more int
		more, err = records.Get(ctx, dir, o)
		got += more
	}
	var se *runner.SignalError
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "%s: %d %s written; %s\n", prog, got, say.Plural(got, "job"), visible.Controls(say.OneLine(err.Error())))
		return 1
	case errors.As(context.Cause(ctx), &se):
		return se.Status()
	case ctx.Err() != nil:
		return runner.StatusInterrupted
	}
	return 0
}

// statusNATS is `tpipe status [--watch] nats://HOST:PORT/NAME`.
func statusNATS(ctx context.Context, addr string, watch bool, stdout, stderr io.Writer) int {
	const prog = "tpipe status"
	n, a, status := dialNet(ctx, prog, addr, natsq.Options{}, stderr)
	if status != 0 {
		return status
	}
	defer n.Close()
	show := func(w io.Writer) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		cs, err := n.Counts(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "net %s (stream %s)\n", a.Net(), a.Stream)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "place\twaiting\tin flight\tdone\tfailed\tredelivered\t\n")
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", visible.Controls(c.Place), c.Waiting, c.InFlight, c.Done, c.Failed, c.Redelivered)
		}
		return tw.Flush()
	}
	if !watch {
		if err := show(stdout); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
			return 1
		}
		return 0
	}
	ctx, e := exitOn(ctx, exitSignals...)
	defer e.stop()
	f, isFile := stdout.(*os.File)
	tty := isFile && term.IsTerminal(int(f.Fd()))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		var b strings.Builder
		if err := show(&b); err != nil {
			fmt.Fprintf(stderr, "%s: %s\n", prog, visible.Controls(err.Error()))
		} else if tty {
			fmt.Fprint(stdout, "\x1b[H\x1b[2J"+b.String())
		} else {
			fmt.Fprintf(stdout, "%s %s", time.Now().Format("15:04:05"), b.String())
		}
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
	}
}

// mistypedAddr says, for an argument that looks like an address but is
// not a nats:// one (nats:/h, NATS://h, tls://h), what to write; "" for
// one that is not an address at all (a folder).
func mistypedAddr(arg string) string {
	l := strings.ToLower(arg)
	if natsq.IsAddr(arg) || !strings.HasPrefix(l, "nats:") && !strings.Contains(arg, "://") {
		return ""
	}
	return fmt.Sprintf("%s is not an address tpipe takes: write nats://HOST:PORT/NAME (a folder name with \"://\" or \"nats:\" in it: write ./%s)", arg, arg)
}
