package builtin

// sort whose output is cut: `sort | head -n N` needs only the N first
// lines of the order, `sort | tail -n N` the N last, so sort keeps those
// in a heap of N lines as it reads (a top-k selection) instead of holding
// and ordering all of them. The output is the same: of lines that compare
// equal, the earlier in the input comes first, as in the stable sort the
// full path does.

import (
	"container/heap"
	"slices"

	"github.com/tpipe/tpipe/buffer"
)

// Cut tells a command that orders its input whole (sort) that its output
// goes to a head or tail that keeps N lines and reads nothing more. The
// zero Cut cuts nothing.
type Cut struct {
	N    int  // lines kept; 0: no cut
	Last bool // the last N (tail -n N), else the first N (head -n N)
}

// maxCut is the largest N sort keeps in a heap; past it, it sorts as
// usual (the lines kept would be most of a run anyway).
const maxCut = 1 << 16

// CutOf reports the Cut that a head or tail command line makes, when it
// keeps a fixed number of lines of its input and has no other option or
// operand: head, head -n N, head -nN, head -N, and the same for tail
// (not tail -n +N, which skips lines).
func CutOf(argv []string) (Cut, bool) {
	if len(argv) == 0 || argv[0] != "head" && argv[0] != "tail" {
		return Cut{}, false
	}
	last := argv[0] == "tail"
	var num string
	switch args := argv[1:]; {
	case len(args) == 0:
		num = "10"
	case len(args) == 1 && len(args[0]) > 2 && args[0][:2] == "-n":
		num = args[0][2:]
	case len(args) == 1 && len(args[0]) > 1 && args[0][0] == '-':
		num = args[0][1:]
	case len(args) == 2 && args[0] == "-n":
		num = args[1]
	default:
		return Cut{}, false
	}
	n := 0
	for _, c := range []byte(num) {
		if !sortIsDigit(c) || n > maxCut {
			return Cut{}, false
		}
		n = n*10 + int(c-'0')
	}
	if n == 0 || n > maxCut {
		return Cut{}, false
	}
	return Cut{N: n, Last: last}, true
}

func (e *Env) cut() (Cut, bool) {
	if e == nil || e.Cut.N <= 0 {
		return Cut{}, false
	}
	return e.Cut, true
}

// cutLine is a line kept by runCut: a copy, its input position, and the
// abbreviated key of the first level.
type cutLine struct {
	line []byte
	seq  int
	key  uint64
}

// cutHeap keeps the N best lines with the worst on top: for head the
// greatest, for tail the least.
type cutHeap struct {
	c     *sortCmd
	lines []*cutLine
	last  bool
}

// order compares two kept lines: the sort's order, then input order.
func (h *cutHeap) order(a, b *cutLine) int {
	if a.key != b.key {
		if a.key < b.key {
			return -1
		}
		return 1
	}
	if d := h.c.compare(a.line, b.line); d != 0 {
		return d
	}
	return a.seq - b.seq
}

func (h *cutHeap) Len() int { return len(h.lines) }
func (h *cutHeap) Less(i, j int) bool {
	d := h.order(h.lines[i], h.lines[j])
	if h.last {
		return d < 0
	}
	return d > 0
}
func (h *cutHeap) Swap(i, j int) { h.lines[i], h.lines[j] = h.lines[j], h.lines[i] }
func (h *cutHeap) Push(x any)    { h.lines = append(h.lines, x.(*cutLine)) }
func (h *cutHeap) Pop() any {
	x := h.lines[len(h.lines)-1]
	h.lines = h.lines[:len(h.lines)-1]
	return x
}

// runCut sorts for a cut output: it keeps the cut's lines as it reads and
// writes them in order at the end.
func (c *sortCmd) runCut(p *buffer.Ports, cut Cut) error {
	s := newSorter(c)
	level := sortLevel{}
	k := s.levelKey(level)
	abbrev := func(line []byte) uint64 {
		if !k.abbreviates() {
			return 0
		}
		return k.abbrev(s.text(line, level), 0)
	}
	h := &cutHeap{c: c, last: cut.Last}
	probe := &cutLine{}
	seq := 0
	err := c.read(p, func(line []byte) error {
		seq++
		probe.line, probe.seq, probe.key = line, seq, abbrev(line)
		if len(h.lines) < cut.N {
			heap.Push(h, &cutLine{line: append([]byte(nil), line...), seq: seq, key: probe.key})
			return nil
		}
		top := h.lines[0]
		d := h.order(probe, top)
		if cut.Last && d <= 0 || !cut.Last && d >= 0 {
			return nil // no better than the worst kept
		}
		top.line, top.seq, top.key = append(top.line[:0], line...), seq, probe.key
		heap.Fix(h, 0)
		return nil
	})
	if err != nil {
		return c.inputError(err)
	}
	slices.SortFunc(h.lines, h.order)
	emit, done, err := c.emitter(p)
	if err != nil {
		return err
	}
	for _, l := range h.lines {
		if err := emit(l.line, 1); err != nil {
			return err
		}
	}
	return done()
}
