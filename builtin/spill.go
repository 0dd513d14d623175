package builtin

// External merge sort for sort: sorted runs spilled to temporary files and
// merged back through a loser tree.
//
// A run is a record file (package recfile) of one line a record, in
// blocks of 64 KiB, stored without compression. A run is written once and
// read once, by the same process, mostly through the page cache, so what
// matters is the CPU spent per byte. Measured on the 88 MB access log of
// bench/corpus, sort -S 8M (eleven runs and a merge), CPU seconds of user
// time, median of three on the 2-core machine: whole lines 0.27 stored,
// 0.56 with S2, 0.85 with zstd's fastest level; -k10,10n 1.33, 1.57 and
// 2.04. (Once the sort itself got faster than the 50 MB/s it ran at when
// S2 was chosen, compression became most of a spill's cost.) GNU sort
// writes its temporary files uncompressed too, unless given
// --compress-program. A run being written or read holds one block of
// lines, which bounds the memory of a merge with many runs open.
//
// Run files come from recfile.CreateTemp and have no name: a sort killed
// in the middle leaves nothing in TMPDIR. A run is an open descriptor
// until it is merged; sort merges runs as soon as spillFanIn of them are
// at the same level, so few are open at once.

import (
	"fmt"
	"io"
	"os"

	"github.com/tpipe/tpipe/record/recfile"
)

const (
	// spillBlock is the raw bytes of lines in one block of a run file,
	// which bounds the memory of each run being written or read.
	spillBlock = 64 << 10
	// spillFanIn is the most runs merged at once, which bounds the files
	// open and the memory of a merge; more runs are merged in several
	// passes.
	spillFanIn = 16
)

// spillSource is a sorted stream of lines (without '\n'). The line next
// returns is valid until the next call; io.EOF ends the stream.
type spillSource interface {
	next() ([]byte, error)
}

// spillMem is a spillSource over the lines of a sortBuffer, in the order
// of its refs, each as many times as it was folded (once with unique).
type spillMem struct {
	buf    *sortBuffer
	unique bool
	i      int
	left   int // copies of line i-1 still to give
}

func (m *spillMem) next() ([]byte, error) {
	if m.left == 0 {
		if m.i == len(m.buf.lines) {
			return nil, io.EOF
		}
		m.i++
		m.left = m.buf.times(m.buf.lines[m.i-1].ref, m.unique)
	}
	m.left--
	return m.buf.at(m.buf.lines[m.i-1].ref), nil
}

// spillFiles creates the run files of one sort in a directory (dir, or
// os.TempDir() if empty) and closes them all in cleanup, however the sort
// ends. It is not safe for concurrent use.
type spillFiles struct {
	dir  string
	runs []*spillRun     // every run created and not yet removed
	w    *recfile.Writer // reused from run to run: one run is written at a time
}

// spillRun is one run file: open, with no name, size bytes long once
// written.
type spillRun struct {
	f     *os.File
	size  int64
	level int // how many merges its lines went through
}

// create starts a new run file. The previous one must be closed (or
// aborted) first.
func (s *spillFiles) create() (*spillWriter, error) {
	f, err := recfile.CreateTemp(s.dir)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	run := &spillRun{f: f}
	s.runs = append(s.runs, run)
	if s.w == nil {
		s.w = recfile.NewWriter(f, recfile.None, spillBlock)
	} else {
		s.w.Reset(f)
	}
	return &spillWriter{run: run, w: s.w}, nil
}

// open starts reading a finished run.
func (s *spillFiles) open(run *spillRun) (*spillReader, error) {
	// A line longer than a block has a block of its own: no limit but the
	// format's.
	return &spillReader{r: recfile.NewReader(io.NewSectionReader(run.f, 0, run.size), 0)}, nil
}

// remove deletes a run (once merged).
func (s *spillFiles) remove(run *spillRun) {
	run.f.Close()
	for i, r := range s.runs {
		if r == run {
			s.runs = append(s.runs[:i], s.runs[i+1:]...)
			break
		}
	}
}

// cleanup deletes every run left.
func (s *spillFiles) cleanup() {
	for _, r := range s.runs {
		r.f.Close()
	}
	s.runs = nil
}

// spillWriter writes one run.
type spillWriter struct {
	run *spillRun
	w   *recfile.Writer
}

func (w *spillWriter) add(line []byte) error {
	if err := w.w.Add(line); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}

// close finishes the run and returns it.
func (w *spillWriter) close() (*spillRun, error) {
	if err := w.w.Close(); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	w.run.size = w.w.Written()
	return w.run, nil
}

// spillReader reads a run written by spillWriter. It is a spillSource.
type spillReader struct {
	r *recfile.Reader
}

func (r *spillReader) next() ([]byte, error) {
	line, err := r.r.Next()
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("spill: read: %w", err)
	}
	return line, err
}

// spillMerge merges the sorted sources into emit in the order of cmp. Of
// lines that compare equal, those of an earlier source come first, so a
// stable sort stays stable when its input was cut into runs in order.
// With unique, only the first line of each group of equal lines is
// emitted. The line emit gets is valid only during the call.
func spillMerge(srcs []spillSource, ord spillOrder, unique bool, emit func([]byte) error) error {
	if len(srcs) == 0 {
		return nil
	}
	cmp := ord.cmp
	t := &loserTree{ord: ord, srcs: srcs, lines: make([][]byte, len(srcs)), keys: make([]uint64, len(srcs)), done: make([]bool, len(srcs))}
	for i := range srcs {
		if err := t.advance(i); err != nil {
			return err
		}
	}
	t.init()
	var last []byte
	have := false
	for {
		w := t.tree[0]
		if t.done[w] {
			return nil
		}
		line := t.lines[w]
		if !unique || !have || cmp(line, last) != 0 {
			if err := emit(line); err != nil {
				return err
			}
			if unique {
				last = append(last[:0], line...)
				have = true
			}
		}
		if err := t.advance(w); err != nil {
			return err
		}
		t.replay(w)
	}
}

// spillOrder is the order of a merge: cmp, and, if set, an abbreviation
// that agrees with it (a line whose abbreviation is smaller sorts first),
// computed once per line so that most matches compare two integers.
type spillOrder struct {
	cmp    func(a, b []byte) int
	abbrev func(line []byte) uint64
}

// loserTree is a tournament over the current lines of k sources (Knuth's
// replacement selection tree): each inner node holds the source that lost
// the match there, tree[0] the overall winner, so that the next winner
// costs one match per level, log2(k), where a binary heap costs two. A
// source at its end loses to every line; ties go to the earlier source.
type loserTree struct {
	ord   spillOrder
	srcs  []spillSource
	lines [][]byte // each source's current line
	keys  []uint64 // and its abbreviation, with ord.abbrev
	done  []bool   // the source is at its end
	tree  []int    // tree[0]: the winner; tree[1:]: losers; leaves are k..2k-1
}

// less reports whether source a's line comes before source b's.
func (t *loserTree) less(a, b int) bool {
	switch {
	case t.done[a] || t.done[b]:
		return !t.done[a] || t.done[b] && a < b
	}
	if ka, kb := t.keys[a], t.keys[b]; ka != kb {
		return ka < kb
	}
	if d := t.ord.cmp(t.lines[a], t.lines[b]); d != 0 {
		return d < 0
	}
	return a < b
}

// advance reads source i's next line.
func (t *loserTree) advance(i int) error {
	line, err := t.srcs[i].next()
	switch {
	case err == io.EOF:
		t.done[i] = true
	case err != nil:
		return err
	default:
		t.lines[i] = line
		if t.ord.abbrev != nil {
			t.keys[i] = t.ord.abbrev(line)
		}
	}
	return nil
}

// init plays every match once.
func (t *loserTree) init() {
	k := len(t.srcs)
	win := make([]int, 2*k)
	for i := range k {
		win[k+i] = i
	}
	t.tree = make([]int, k)
	for n := k - 1; n >= 1; n-- {
		a, b := win[2*n], win[2*n+1]
		if t.less(b, a) {
			a, b = b, a
		}
		win[n], t.tree[n] = a, b
	}
	t.tree[0] = win[1]
}

// replay plays again the matches from source s's leaf to the root, after
// s's line changed.
func (t *loserTree) replay(s int) {
	k := len(t.srcs)
	for n := (s + k) / 2; n >= 1; n /= 2 {
		if t.less(t.tree[n], s) {
			s, t.tree[n] = t.tree[n], s
		}
	}
	t.tree[0] = s
}

// mergeRuns merges runs, in input order, into one new run and removes
// them. With unique, the new run keeps the first of each group of equal
// lines.
func (s *spillFiles) mergeRuns(runs []*spillRun, ord spillOrder, unique bool) (*spillRun, error) {
	srcs := make([]spillSource, 0, len(runs))
	level := 0
	for _, run := range runs {
		r, err := s.open(run)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, r)
		level = max(level, run.level)
	}
	w, err := s.create()
	if err != nil {
		return nil, err
	}
	if err := spillMerge(srcs, ord, unique, w.add); err != nil {
		return nil, err // the new run goes with cleanup
	}
	merged, err := w.close()
	if err != nil {
		return nil, err
	}
	merged.level = level + 1
	for _, run := range runs {
		s.remove(run)
	}
	return merged, nil
}
