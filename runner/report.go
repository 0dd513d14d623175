package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/sched"
)

// Explain describes a job without running it: the policy, the tasks in
// topological order, the queues with their capacities, the bound, B and
// the record memory B x S.
func Explain(w io.Writer, j *Job) {
	pl := j.Plan
	g := pl.Graph
	fmt.Fprintf(w, "policy %s: %s\n", pl.Policy, pl.Policy.Summary())
	if pl.Policy.Chooses() {
		fmt.Fprintf(w, "%s runs %s: %s\n", pl.Policy, pl.Runs, pl.Why)
	}
	if pl.Runs.Fuses() || pl.Policy.Chooses() {
		if _, notes, err := sched.Fuse(g); err == nil {
			what := "fusion (loop jamming of per-record stages)"
			if !pl.Runs.Fuses() {
				what = "what --policy " + fusingPolicy() + " would fuse"
			}
			fmt.Fprintf(w, "%s:\n", what)
			for _, n := range notes {
				fmt.Fprintf(w, "  %s\n", n)
			}
		}
	}
	fmt.Fprintf(w, "tasks (topological order):\n")
	for _, i := range g.Order() {
		t := g.Tasks[i]
		form := "general"
		switch {
		case t.Rec != nil:
			form = "per-record"
		case t.Source != nil:
			form = "per-record source"
		case t.Sink != nil:
			form = "per-record sink"
		}
		fmt.Fprintf(w, "  %d %-14s in %d, out %d, %s\n", t.Index, t.Name, t.In, t.Out, form)
	}
	fmt.Fprintf(w, "queues:\n")
	for _, e := range g.Edges {
		kept := ""
		if h := g.Tasks[e.To.Task].Holds; h > 0 {
			kept = fmt.Sprintf(" (%d, and %d that %s keeps)", e.Cap, h, g.Tasks[e.To.Task].Name)
		}
		fmt.Fprintf(w, "  %-4s %s -> %s, cap %d%s\n", e.Name, g.Tasks[e.From.Task].Name, g.Tasks[e.To.Task].Name, g.QueueCap(e), kept)
	}
	if kept := pl.Kept(); kept != nil {
		explainSpool(w, pl, kept)
	}
	fmt.Fprintf(w, "bound: %d buffers = %s; %s\n", pl.Bound, pl.BoundIs, pl.Shape)
	fmt.Fprintf(w, "buffers: B = %d of S = %s: record memory at most %s, each buffer allocated when first used\n", pl.Buffers, size(int64(pl.RecordSize)), size(pl.Memory()))
	if j.RecordSizeWhy != "" {
		fmt.Fprintf(w, "%s\n", j.RecordSizeWhy)
	}
	fmt.Fprintf(w, "long lines: lines longer than S travel as chains of S-sized pieces inside B; a task that needs a whole line (grep, sed, sort) reassembles it outside the pool, up to %s; cat, head -c, tail -c, wc, tee and redirects move the pieces\n",
		size(buffer.DefaultMaxRecord))
	if pl.Runs.Finite() {
		fmt.Fprintf(w, "batch: %s runs each task to its end before the next one reads, so output comes once the input has ended; for endless input (tail -f, a log) use concurrent, ros or fused\n", pl.Runs)
	} else {
		fmt.Fprintf(w, "streaming: a line a task writes reaches the next task, and stdout or a file, as soon as the writer would wait for input; an early exit (head, grep -m, sed q, awk's exit) stops the tasks before it at once, and an external program's output is closed\n")
		if externalIn(g) {
			fmt.Fprintf(w, "external programs (and fallbacks) buffer what they write to a pipe as under bash: on a stream, ask them for lines (grep --line-buffered, stdbuf -oL CMD)\n")
		}
	}
	if len(j.Spilling) > 0 {
		fmt.Fprintf(w, "task memory: at most %s each (--sort-memory%s) for %s: %s in all, allocated as lines arrive; past it they spill to unlinked temp files\n",
			size(j.TaskMemory), j.TaskMemoryWhy, strings.Join(j.Spilling, ", "), size(j.TaskMemory*int64(len(j.Spilling))))
	}
	if len(j.OwnBudgets) > 0 {
		fmt.Fprintf(w, "task memory set by the command (sort -S): %s, beside --sort-memory's\n", strings.Join(j.OwnBudgets, ", "))
	}
	if len(j.Unbounded) > 0 {
		fmt.Fprintf(w, "unbounded memory: what %s keeps as it runs (awk's arrays and strings) has no budget and no spill, and the GC has no memory limit\n", strings.Join(j.Unbounded, ", "))
	}
	for _, c := range j.Cuts {
		fmt.Fprintf(w, "%s\n", c)
	}
	for _, f := range j.Fallbacks {
		fmt.Fprintf(w, "fallback: %s (the builtin does not implement this command line; --no-fallback refuses it)\n", f)
	}
	if n, who := g.Held(); n > 0 {
		fmt.Fprintf(w, "kept besides the buffers being read: %s (a lookahead of records, kept in the pool, no copy): in B, %s of the record memory\n",
			who, size(int64(n)*int64(pl.RecordSize)))
	}
	for _, r := range pl.Replicas {
		when := "from the start"
		if r.Auto {
			when = "once it measures itself busy (over 90% of 10 ms not waiting on its queues)"
		}
		fmt.Fprintf(w, "replicas: %s runs as %d copies %s, its output kept in input order; up to %d batches of S in flight, held outside the pool (--replicas)\n",
			r.Name, r.N, when, 2*r.N)
	}
	if pl.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", pl.Warning)
	}
}

// explainSpool shows the places of a spooled run and its layout on disk.
func explainSpool(w io.Writer, pl *sched.Plan, kept *sched.Kept) {
	g := pl.Graph
	o := sched.SpoolOptions{}
	if pl.Options.Spool != nil {
		o = *pl.Options.Spool
	}
	dir := kept.Dir
	if dir == "" {
		dir = "(a temporary directory)"
	}
	seg := o.Segment
	if seg == 0 {
		seg = sched.DefaultSegment
	}
	fsync := "on"
	if o.NoSync {
		fsync = "off"
	}
	fmt.Fprintf(w, "spool %s: every queue a place (a directory), its records in segments of %s (--segment), fsync %s, compress %s\n",
		dir, size(int64(seg)), fsync, o.Codec)
	for k, p := range kept.Edges {
		e := g.Edges[k]
		where := filepath.Join(dir, p.Place) + "/"
		if p.File != "" {
			where = p.File + ", read in place (not copied)"
		} else if p.Virtual {
			where += fmt.Sprintf(", virtual (never written): %s and %s run in one pass over each segment",
				g.Tasks[e.From.Task].Name, g.Tasks[e.To.Task].Name)
		}
		fmt.Fprintf(w, "  %-4s %s -> %s: %s\n", e.Name, g.Tasks[e.From.Task].Name, g.Tasks[e.To.Task].Name, where)
	}
	fmt.Fprintf(w, "spool steps:\n")
	for _, i := range g.Order() {
		if t := g.Tasks[i]; t.Out > 0 {
			fmt.Fprintf(w, "  %-14s %s\n", t.Name, kept.Stages[i])
		}
	}
	fmt.Fprintf(w, "spool layout: DIR/graph the graph and the tokens of its last complete run; DIR/.lock/run one run at a time; "+
		"PLACE/SEG.HASH a segment, HASH the causal hash of its stage and inputs; PLACE/end.GEN the place is complete; PLACE/err.GEN the stderr of the stage that writes it; "+
		"PLACE/.tmp tokens being written; PLACE/.claim and .lock claims and locks; PLACE/.bad corrupt tokens moved aside\n")
}

// fusingPolicy names the policy that fuses, for --explain under one that
// does not.
func fusingPolicy() string {
	for _, p := range sched.Policies() {
		if p.Fuses() {
			return p.String()
		}
	}
	return ""
}

// size prints bytes with a binary unit.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// WriteStats prints the table of --stats: per queue records, bytes,
// high-water and time blocked; per task busy and blocked time.
func WriteStats(w io.Writer, st *sched.Stats) {
	fmt.Fprintf(w, "policy %s, B = %d of %s, buffers high-water %d, wall %s\n",
		st.Policy, st.Buffers, size(int64(st.RecordSize)), st.BuffersHighWater, round(st.Wall))
	if st.Disk != nil {
		fmt.Fprintf(w, "disk: %d bytes written, %d bytes read\n", st.Disk.Written, st.Disk.Read)
	}
	if sp := st.Spool; sp != nil {
		fmt.Fprintf(w, "spool %s: %d tokens written, %d bytes written, %d bytes read\n", sp.Dir, sp.TokensWritten, sp.BytesWritten, sp.BytesRead)
	}
	if ca := st.CapAuto; ca != nil {
		fmt.Fprintf(w, "cap auto: bottleneck %s, window %d, capacities sum to %d buffers\n", ca.Bottleneck, ca.Window, ca.Buffers)
	}
	if st.Growths+st.Spills > 0 {
		fmt.Fprintf(w, "stalls resolved: %d queue growths, %d spills, %d bytes spilled (%d compressed on disk)\n",
			st.Growths, st.Spills, st.SpilledBytes, st.SpillDiskBytes)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "queue\tfrom\tto\tcap\trecords\tbytes\thigh-water\tread wait\twrite wait\tgrowths\tspilled\t\n")
	for _, e := range st.Edges {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t\n", e.Name, e.From, e.To, e.Cap, e.Records, e.Bytes, e.HighWater, round(e.ReadWait), round(e.WriteWait), e.Growths, e.Spilled)
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	segs := st.Spool != nil
	head := "task\tbusy\tblocked\tstatus\t"
	if segs {
		head += "segments run\tcached\t"
	}
	fmt.Fprintln(tw, head)
	for _, t := range st.Tasks {
		status := fmt.Sprint(t.Status)
		if t.Err != "" {
			status = "error"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", t.Name, round(t.Busy), round(t.Blocked), status)
		if segs {
			fmt.Fprintf(tw, "%d\t%d\t", t.SegmentsRun, t.SegmentsCached)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func round(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	default:
		return d.Round(100 * time.Microsecond).String()
	}
}

// StatsJSON is the document of --stats-json: the fields of the last (or
// only) pipeline at the top level, with buffers_high_water the most over all
// pipelines, and every pipeline's statistics under "pipelines".
type StatsJSON struct {
	*sched.Stats
	Pipelines []*sched.Stats `json:"pipelines"`
}

// WriteStatsJSON writes the statistics of the pipelines of one script.
func WriteStatsJSON(w io.Writer, runs []*sched.Stats) error {
	doc := StatsJSON{Stats: &sched.Stats{Tasks: []sched.TaskStats{}, Edges: []sched.EdgeStats{}}, Pipelines: runs}
	if len(runs) > 0 {
		top := *runs[len(runs)-1]
		for _, r := range runs {
			top.BuffersHighWater = max(top.BuffersHighWater, r.BuffersHighWater)
		}
		doc.Stats = &top
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// externalIn reports whether g runs an external program.
func externalIn(g *graph.Graph) bool {
	for _, t := range g.Tasks {
		if t.Together != "" {
			return true
		}
	}
	return false
}
