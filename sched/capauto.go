package sched

import (
	"math"
	"time"

	"github.com/tpipe/tpipe/graph"
)

// Capacities sized at run time (Options.CapAuto), after the sliding-window
// rule of Li and Lin's "PipeFlow Engine": keep the slowest stage (the
// bottleneck) busy with the fewest buffered segments. There, a segment
// takes the sum of the upstream jobs' durations to reach the bottleneck,
// so the number pending at and before it must exceed that sum divided by
// the bottleneck's own duration.
//
// Here every queue starts with capacity 2: a queue's capacity counts the
// buffer its reader holds, so 2 is the least that lets a writer fill one
// buffer while the reader reads the other (at 1 they take turns, and a
// chain of copies ran at half speed). A sampler measures each task's busy
// time per record, smoothed as an EWMA, finds the bottleneck b and sets
// the capacity of b's inputs to 1 + W: the buffer b reads and W pending,
// W = ceil(sum of T over b's ancestors / T(b)), at most the number of
// ancestors (PipeFlow's upper bound before anything is measured: no
// upstream stage is slower than b).
// Capacities only grow, and never past B in total, so Theorem 3.2 holds
// at every moment.

// capAutoPeriod is how often the sampler looks; capAutoAlpha the weight of
// the newest sample in the EWMA.
const (
	capAutoPeriod = 5 * time.Millisecond
	capAutoAlpha  = 0.5
)

// CapAutoStats say where --cap auto landed.
type CapAutoStats struct {
	Bottleneck string `json:"bottleneck"` // the slowest task at the end
	Window     int    `json:"window"`     // W of the sliding-window rule
	Buffers    int    `json:"buffers"`    // the sum of the final capacities
	// NsPerRecord is each task's EWMA of busy time per record, in task
	// order (0 for a task that handled no record).
	NsPerRecord []float64 `json:"ns_per_record"`
}

// capAutoStart is the capacity every queue starts with under CapAuto.
const capAutoStart = 2

// capAutoBound is B for a CapAuto run: every queue at its start, plus room
// for the largest window the rule can ask for, on the inputs of whichever
// task turns out to be the bottleneck.
// A task that keeps buffers of its inputs (graph.Task.Holds) has them on
// top, on each of its input queues.
func capAutoBound(g *graph.Graph) int {
	extra := 0
	for i, t := range g.Tasks {
		extra = max(extra, t.In*(1+ancestors(g, i).count-capAutoStart))
	}
	held, _ := g.Held()
	return max(capAutoStart*len(g.Edges)+held+extra, 1)
}

type ancestorSet struct {
	of    []bool // by task position
	count int
}

// ancestors returns the tasks with a path to the task at position pos.
func ancestors(g *graph.Graph, pos int) ancestorSet {
	a := ancestorSet{of: make([]bool, len(g.Tasks))}
	stack := []int{pos}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.Edges {
			if e.To.Task == t && !a.of[e.From.Task] {
				a.of[e.From.Task] = true
				a.count++
				stack = append(stack, e.From.Task)
			}
		}
	}
	return a
}

// capAuto is the sampler of one run.
type capAuto struct {
	r        *runState
	snap     Snapshot // the last sample, its slices reused
	meter    *Meter
	windows  []int // the largest window asked for, by bottleneck task
	neck     int   // task position of the bottleneck, -1 before any
	seen     int   // consecutive samples that found the same bottleneck
	ancestry []ancestorSet
	stop     chan struct{}
	done     chan struct{}
}

func startCapAuto(r *runState) *capAuto {
	n := len(r.g.Tasks)
	c := &capAuto{r: r, meter: NewMeter(capAutoAlpha), windows: make([]int, n),
		neck: -1, stop: make(chan struct{}), done: make(chan struct{}), ancestry: make([]ancestorSet, n)}
	for i := range r.g.Tasks {
		c.ancestry[i] = ancestors(r.g, i)
	}
	go c.loop()
	return c
}

func (c *capAuto) loop() {
	defer close(c.done)
	tick := time.NewTicker(capAutoPeriod)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.sample()
		}
	}
}

// ewma is each task's EWMA of busy time per record (Meter.NsPerRecord),
// by task position.
func (c *capAuto) ewma(i int) float64 {
	if rs := c.meter.Rates(); i < len(rs) {
		return rs[i].NsPerRecord
	}
	return 0
}

// sample updates the EWMAs and the capacities.
func (c *capAuto) sample() {
	r := c.r
	r.sampleRun(&c.snap)
	c.meter.Add(&c.snap)
	neck := -1
	for i := range r.g.Tasks {
		if t := c.ewma(i); t > 0 && (neck < 0 || t > c.ewma(neck)) {
			neck = i
		}
	}
	if neck < 0 {
		return
	}
	// A task must look slowest twice running before its queues grow: the
	// first samples of a run (goroutines starting, caches cold) mislead.
	if neck == c.neck {
		c.seen++
	} else {
		c.neck, c.seen = neck, 1
	}
	if c.seen < 2 {
		return
	}
	sum := 0.0
	for u, is := range c.ancestry[neck].of {
		if is {
			sum += c.ewma(u)
		}
	}
	w := int(math.Ceil(sum / c.ewma(neck)))
	w = max(1, min(w, c.ancestry[neck].count))
	c.windows[neck] = max(c.windows[neck], w)
	used := 0
	for _, q := range r.queues {
		used += q.Cap()
	}
	for k, e := range r.g.Edges {
		if e.To.Task != neck {
			continue
		}
		q := r.queues[k]
		if grow := min(1+w+r.g.Tasks[neck].Holds-q.Cap(), r.pl.Buffers-used); grow > 0 {
			q.Grow(grow)
			used += grow
		}
	}
}

// finish stops the sampler and returns where it landed.
func (c *capAuto) finish() *CapAutoStats {
	close(c.stop)
	<-c.done
	st := &CapAutoStats{NsPerRecord: make([]float64, len(c.r.g.Tasks))}
	for i := range st.NsPerRecord {
		st.NsPerRecord[i] = c.ewma(i)
	}
	if c.neck >= 0 {
		st.Bottleneck = c.r.g.Tasks[c.neck].Name
		st.Window = c.windows[c.neck]
	}
	for _, q := range c.r.queues {
		st.Buffers += q.Cap()
	}
	return st
}
