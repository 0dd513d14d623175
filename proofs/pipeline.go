package proofs

import (
	"fmt"
	"strings"
)

// Size limits of the model. They bound the fixed arrays of a state, so a
// state is a plain value that copies without allocating.
const (
	MaxTasks  = 6
	MaxQueues = 6
	maxSlots  = 8 // buffers one queue can hold, capacity growth included
	maxPorts  = 2
	maxBatch  = 2 // records one buffer can carry when batching
	maxInput  = 3 // records in the input file
)

// File, as a task's input or output, is the pipeline's peripheral input
// file IN or output file OUT. Reading or writing it never blocks and
// touches no buffer of FREE.
const File = -1

// Kind says what a task does with its records. Every kind follows rules
// B1-B4 of the paper: it reads each input until eof and nothing after,
// writes eof to every output only after eof on every input, and then ends.
type Kind uint8

const (
	Copy      Kind = iota + 1 // copies its input, one record at a time
	Prefix                    // writes a header record, then copies
	Filter                    // copies the records with an odd value
	Duplicate                 // writes each record twice
	Sum                       // reads all, then writes one record: the sum
	Tee                       // writes each record to both outputs
	Route                     // writes a record whose value is a multiple of 3 to output 1, others to output 0
	Join                      // reads input 0 to its end, then input 1, and copies both
	Merge                     // reads its inputs in turn, 0 first; after eof on one, the other to its end
)

// ChainKinds are the kinds a chain is drawn from.
var ChainKinds = []Kind{Copy, Prefix, Filter, Duplicate, Sum}

var kindNames = [...]string{Copy: "COPY", Prefix: "PREFIX", Filter: "FILTER", Duplicate: "DUPLICATE",
	Sum: "SUM", Tee: "TEE", Route: "ROUTE", Join: "JOIN", Merge: "MERGE"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Ports returns how many inputs and outputs a task of kind k has.
func (k Kind) Ports() (in, out int) {
	switch k {
	case Tee, Route:
		return 1, 2
	case Join, Merge:
		return 2, 1
	}
	return 1, 1
}

// IsFilter reports whether tpipe runs k as a filter (buffer.Output.Pass):
// each record it keeps leaves in the very buffer it came in, so no buffer
// is taken from FREE for it.
func (k Kind) IsFilter() bool { return k == Copy || k == Prefix || k == Filter }

// Record values. A record is one byte: 1 to 3 are the input records x1 to
// x3, 16+i is the header PREFIX task Ti writes, 64+s is a sum. Value 0 is
// eof, when eof travels in a buffer.
const (
	eofValue  = 0
	hdrBase   = 16
	sumBase   = 64
	sumModulo = 64
)

// RecordName returns the name of a record value as traces print it.
func RecordName(v byte) string {
	switch {
	case v == eofValue:
		return "eof"
	case v < hdrBase:
		return fmt.Sprintf("x%d", v)
	case v < sumBase:
		return fmt.Sprintf("h%d", v-hdrBase)
	default:
		return fmt.Sprintf("s%d", v-sumBase)
	}
}

// Input returns the input file of n records: x1 ... xn.
func Input(n int) []byte {
	in := make([]byte, n)
	for i := range in {
		in[i] = byte(i + 1)
	}
	return in
}

// emission is one record a task has decided to write: to output port
// port, with value val; move says that the record leaves in the buffer it
// was read in (a filter under tpipe).
type emission struct {
	port, val byte
	move      bool
}

// kindState is what a kind remembers between records: a running sum, and
// which input a MERGE reads next.
type kindState struct {
	acc  byte
	turn byte
}

// start returns what task i writes before it reads anything.
func (k Kind) start(i int) []emission {
	if k == Prefix {
		return []emission{{port: 0, val: byte(hdrBase + i + 1)}}
	}
	return nil
}

// record returns what the task writes for a record v read on input in.
func (k Kind) record(ks *kindState, in int, v byte) []emission {
	switch k {
	case Copy, Prefix, Join:
		return []emission{{port: 0, val: v}}
	case Filter:
		if v%2 == 1 {
			return []emission{{port: 0, val: v}}
		}
		return nil
	case Duplicate:
		return []emission{{port: 0, val: v}, {port: 0, val: v}}
	case Sum:
		ks.acc = (ks.acc + v) % sumModulo
		return nil
	case Tee:
		return []emission{{port: 0, val: v}, {port: 1, val: v}}
	case Route:
		if v%3 == 0 {
			return []emission{{port: 1, val: v}}
		}
		return []emission{{port: 0, val: v}}
	case Merge:
		ks.turn = byte(1 - in)
		return []emission{{port: 0, val: v}}
	}
	panic("proofs: unknown kind " + k.String())
}

// end returns what the task writes after eof on every input.
func (k Kind) end(ks *kindState) []emission {
	if k == Sum {
		return []emission{{port: 0, val: sumBase + ks.acc}}
	}
	return nil
}

// nextInput returns the input the task reads next, given which inputs are
// at eof (bit i for input i); -1 when all are.
func (k Kind) nextInput(ks *kindState, eofs byte, nin int) int {
	if eofs == 1<<nin-1 {
		return -1
	}
	switch k {
	case Join:
		if eofs&1 == 0 {
			return 0
		}
		return 1
	case Merge:
		if eofs&(1<<ks.turn) == 0 {
			return int(ks.turn)
		}
		return int(1 - ks.turn)
	}
	return 0
}

// TaskSpec is one task: its kind and, for each port, the queue (an index
// into Pipeline.Queues) or File.
type TaskSpec struct {
	Kind    Kind
	In, Out []int
}

// QueueSpec is one communication file F: its name and capacity cap(F).
type QueueSpec struct {
	Name string
	Cap  int
}

// Pipeline is a graph of tasks linked by queues. Tasks are in topological
// order: a task reads only queues written by tasks before it, and its
// position is its index for Record Oriented Scheduling.
type Pipeline struct {
	Tasks  []TaskSpec
	Queues []QueueSpec
}

// Chain returns the task pipeline T1 | T2 | ... | Tn of the given kinds
// with cap(Fi) = caps[i-1]: T1 reads IN, Tn writes OUT.
func Chain(kinds []Kind, caps []int) Pipeline {
	if len(caps) != len(kinds)-1 {
		panic("proofs: a chain of n tasks has n-1 queues")
	}
	var p Pipeline
	for i, k := range kinds {
		in, out := i-1, i
		if i == 0 {
			in = File
		}
		if i == len(kinds)-1 {
			out = File
		} else {
			p.Queues = append(p.Queues, QueueSpec{Name: fmt.Sprintf("F%d", i+1), Cap: caps[i]})
		}
		p.Tasks = append(p.Tasks, TaskSpec{Kind: k, In: []int{in}, Out: []int{out}})
	}
	return p
}

// TeeJoin is T1:TEE writing every record to Fa and Fb, and T2:JOIN reading
// all of Fa before Fb: the join waits on Fa while the tee waits for room in
// Fb as soon as the input is longer than cap(Fb) can absorb.
func TeeJoin(capA, capB int) Pipeline {
	return Pipeline{
		Tasks: []TaskSpec{
			{Kind: Tee, In: []int{File}, Out: []int{0, 1}},
			{Kind: Join, In: []int{0, 1}, Out: []int{File}},
		},
		Queues: []QueueSpec{{"Fa", capA}, {"Fb", capB}},
	}
}

// TeeCopyJoin is TeeJoin with a COPY on the second branch.
func TeeCopyJoin(capA, capB, capC int) Pipeline {
	return Pipeline{
		Tasks: []TaskSpec{
			{Kind: Tee, In: []int{File}, Out: []int{0, 1}},
			{Kind: Copy, In: []int{1}, Out: []int{2}},
			{Kind: Join, In: []int{0, 2}, Out: []int{File}},
		},
		Queues: []QueueSpec{{"Fa", capA}, {"Fb", capB}, {"Fc", capC}},
	}
}

// RouteMerge is T1:ROUTE sending x1 and x2 to Fa and x3 to Fb, and
// T2:MERGE reading its inputs in turn, Fb first: the merge waits on Fb
// while the route waits for room in Fa.
func RouteMerge(capA, capB int) Pipeline {
	return Pipeline{
		Tasks: []TaskSpec{
			{Kind: Route, In: []int{File}, Out: []int{0, 1}},
			{Kind: Merge, In: []int{1, 0}, Out: []int{File}},
		},
		Queues: []QueueSpec{{"Fa", capA}, {"Fb", capB}},
	}
}

// RouteCopyMerge is RouteMerge with a COPY on the Fb branch, the one the
// merge reads first.
func RouteCopyMerge(capA, capB, capC int) Pipeline {
	return Pipeline{
		Tasks: []TaskSpec{
			{Kind: Route, In: []int{File}, Out: []int{0, 1}},
			{Kind: Copy, In: []int{1}, Out: []int{2}},
			{Kind: Merge, In: []int{2, 0}, Out: []int{File}},
		},
		Queues: []QueueSpec{{"Fa", capA}, {"Fb", capB}, {"Fc", capC}},
	}
}

// TaskName returns "Ti:KIND" for task i (from 0).
func (p Pipeline) TaskName(i int) string { return fmt.Sprintf("T%d:%s", i+1, p.Tasks[i].Kind) }

// SumCaps returns the sum of the capacities: the bound of Theorem 3.2.
func (p Pipeline) SumCaps() int {
	s := 0
	for _, q := range p.Queues {
		s += q.Cap
	}
	return s
}

// Caps returns the capacities in queue order.
func (p Pipeline) Caps() []int {
	c := make([]int, len(p.Queues))
	for i, q := range p.Queues {
		c[i] = q.Cap
	}
	return c
}

// String describes the pipeline: "T1:COPY | T2:PREFIX | T3:COPY (caps 2,1)".
func (p Pipeline) String() string {
	var sb strings.Builder
	chain := true
	for i, t := range p.Tasks {
		if len(t.In) != 1 || len(t.Out) != 1 || (i > 0 && t.In[0] != i-1) {
			chain = false
		}
	}
	if chain {
		for i := range p.Tasks {
			if i > 0 {
				sb.WriteString(" | ")
			}
			sb.WriteString(p.TaskName(i))
		}
	} else {
		for i, t := range p.Tasks {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "%s(%s -> %s)", p.TaskName(i), p.portNames(t.In, "IN"), p.portNames(t.Out, "OUT"))
		}
	}
	sb.WriteString(" (caps ")
	for i, q := range p.Queues {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprint(&sb, q.Cap)
	}
	sb.WriteString(")")
	return sb.String()
}

func (p Pipeline) portNames(ports []int, file string) string {
	names := make([]string, len(ports))
	for i, q := range ports {
		if q == File {
			names[i] = file
		} else {
			names[i] = p.Queues[q].Name
		}
	}
	return strings.Join(names, ",")
}

// Validate checks that the pipeline fits the model: each queue has one
// writer and one later reader, ports match the kinds, at most one task
// writes OUT, and the sizes fit the model's limits.
func (p Pipeline) Validate() error {
	if len(p.Tasks) == 0 || len(p.Tasks) > MaxTasks {
		return fmt.Errorf("proofs: %d tasks: need 1 to %d", len(p.Tasks), MaxTasks)
	}
	if len(p.Queues) > MaxQueues {
		return fmt.Errorf("proofs: %d queues: at most %d", len(p.Queues), MaxQueues)
	}
	writer := make([]int, len(p.Queues))
	reader := make([]int, len(p.Queues))
	for i := range writer {
		writer[i], reader[i] = -1, -1
	}
	outFile := 0
	for i, t := range p.Tasks {
		nin, nout := t.Kind.Ports()
		if len(t.In) != nin || len(t.Out) != nout {
			return fmt.Errorf("proofs: %s has %d inputs and %d outputs, want %d and %d", p.TaskName(i), len(t.In), len(t.Out), nin, nout)
		}
		for _, q := range t.In {
			if q == File {
				continue
			}
			if q < 0 || q >= len(p.Queues) || reader[q] >= 0 {
				return fmt.Errorf("proofs: %s: bad or shared input queue %d", p.TaskName(i), q)
			}
			reader[q] = i
		}
		for _, q := range t.Out {
			if q == File {
				outFile++
				continue
			}
			if q < 0 || q >= len(p.Queues) || writer[q] >= 0 {
				return fmt.Errorf("proofs: %s: bad or shared output queue %d", p.TaskName(i), q)
			}
			writer[q] = i
		}
	}
	if outFile > 1 {
		return fmt.Errorf("proofs: %d tasks write OUT; at most one may", outFile)
	}
	for q, qs := range p.Queues {
		if writer[q] < 0 || reader[q] < 0 || writer[q] >= reader[q] {
			return fmt.Errorf("proofs: queue %s needs a writer before its reader", qs.Name)
		}
		if qs.Cap < 1 || qs.Cap > maxSlots {
			return fmt.Errorf("proofs: queue %s: capacity %d: need 1 to %d", qs.Name, qs.Cap, maxSlots)
		}
	}
	return nil
}

// Serial returns what the serial schedule T1; T2; ...; Tn writes to OUT
// for the input x1 ... xn: each task runs to its end before the next
// starts, and communication files are unbounded lists. This is the meaning
// Theorem 2.2 compares every schedule with.
func (p Pipeline) Serial(n int) []byte {
	files := make([][]byte, len(p.Queues))
	var out []byte
	for i, t := range p.Tasks {
		var ks kindState
		emit := func(es []emission) {
			for _, e := range es {
				if q := t.Out[e.port]; q == File {
					out = append(out, e.val)
				} else {
					files[q] = append(files[q], e.val)
				}
			}
		}
		emit(t.Kind.start(i))
		pos := make([]int, len(t.In))
		var eofs byte
		for {
			in := t.Kind.nextInput(&ks, eofs, len(t.In))
			if in < 0 {
				break
			}
			src := Input(n)
			if q := t.In[in]; q != File {
				src = files[q]
			}
			if pos[in] == len(src) {
				eofs |= 1 << in
				continue
			}
			v := src[pos[in]]
			pos[in]++
			emit(t.Kind.record(&ks, in, v))
		}
		emit(t.Kind.end(&ks))
	}
	return out
}
