package runner

import (
	"bufio"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/tpipe/tpipe/progress"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/video/y4m"
)

// Progress says when a run shows the live view (package progress) on
// Stderr.
type Progress uint8

const (
	// ProgressAuto shows it when Stderr is a terminal and nothing of the
	// run writes to a terminal or reads one (its output goes to files or
	// edges, its input is not typed), once the run has lasted a second.
	ProgressAuto Progress = iota
	ProgressOn
	ProgressOff
)

func (p Progress) String() string {
	switch p {
	case ProgressOn:
		return "on"
	case ProgressOff:
		return "off"
	}
	return "auto"
}

// autoDelay is how long a run goes before progress auto shows it: a run
// that ends sooner leaves the terminal as it was.
const autoDelay = time.Second

// viewSmoothing is the time constant of the view's rates: a change of
// rate shows for the most part within it, whether samples come ten times
// a second (a terminal) or once (plain lines).
const viewSmoothing = 300 * time.Millisecond

// viewMode says whether the jobs of r show the live view, after how long,
// and whether on a terminal (else as plain lines).
func (r *Runner) viewMode() (show bool, delay time.Duration, terminal bool) {
	terminal = isTerminalWriter(r.cfg.Stderr)
	switch r.cfg.Progress {
	case ProgressOn:
		return true, 0, terminal
	case ProgressAuto:
		return terminal, autoDelay, true // unless the job uses a terminal: startView
	}
	return false, 0, false
}

func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// startView starts the live view of job, if r shows one, and returns what
// stops it (nil when there is none). The job's plan then runs with a
// sched.Live, and its in-process tasks' messages go above the view.
func (r *Runner) startView(job *Job) *progress.View {
	show, delay, terminal := r.viewMode()
	if !show || r.cfg.Progress == ProgressAuto && job.terminalIO {
		return nil
	}
	live := &sched.Live{}
	job.Plan.Options.Live = live
	job.input.start()
	o := progress.Options{Terminal: terminal, Delay: delay}
	alpha := 1 - math.Exp(-o.Period().Seconds()/viewSmoothing.Seconds())
	src := &runSource{live: live, meter: sched.NewMeter(alpha), in: job.input}
	v := progress.Start(r.cfg.Stderr, src, o)
	job.stderr.set(v.Writer())
	if job.stdout != nil {
		job.stdout.set(v.Writer())
	}
	return v
}

// runSource is a run as the live view sees it: a row per task of the
// graph that runs, from sched's snapshots through a Meter, and the total
// from the input the run reads.
type runSource struct {
	live  *sched.Live
	meter *sched.Meter
	in    *inputMeter
}

var _ progress.Source = (*runSource)(nil)

func (s *runSource) Sample() progress.Frame {
	snap := s.live.Snapshot()
	f := progress.Frame{Elapsed: snap.Elapsed}
	if len(snap.Tasks) == 0 {
		return f
	}
	s.meter.Add(&snap)
	rates, neck := s.meter.Rates(), s.meter.Bottleneck()
	rows := make([]progress.Row, len(snap.Tasks))
	for i, t := range snap.Tasks {
		rows[i] = progress.Row{Name: t.Name, Records: rates[i].Records, Bytes: rates[i].Bytes, Busy: rates[i].Busy,
			Bottleneck: i == neck, Done: t.Done}
	}
	for _, e := range snap.Edges {
		rows[e.To].Fill += e.Len
		rows[e.To].Cap += e.Cap
	}
	// Rows in the order records flow: sources first.
	f.Rows = make([]progress.Row, 0, len(rows))
	for _, i := range byIndex(snap.Tasks) {
		f.Rows = append(f.Rows, rows[i])
	}
	f.Total = s.in.total(&snap)
	return f
}

// byIndex returns the positions of tasks in the order of their Index.
func byIndex(tasks []sched.TaskSample) []int {
	pos := make([]int, len(tasks))
	for i := range pos {
		pos[i] = i
	}
	slices.SortStableFunc(pos, func(a, b int) int { return tasks[a].Index - tasks[b].Index })
	return pos
}

// inputMeter follows how far a run has read its input: the '<' file of
// its first command, or the files that command opens (FILE operands).
// It reads each file's offset when sampled (lseek, which a concurrent
// read does not mind, and which sees a program's reads of a shared '<'
// file too), so reading costs nothing more. A file that is closed counts
// as read. For a decode of y4m, the total is in frames: the file's frame
// count from its size and the header's frame size.
//
// An inputMeter is safe for concurrent use; a nil one measures nothing.
type inputMeter struct {
	mu      sync.Mutex
	files   []*os.File
	sizes   []int64
	of      int64
	running bool // files opened from now on are the run's
	// video is the task whose output records are frames (decode), if
	// the first command is one; frames is the frame count of the first
	// file, once counted, 0 if it could not be told.
	video   string
	frames  int64
	counted bool
}

// add follows f, if it is a regular file.
func (m *inputMeter) add(f *os.File) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files = append(m.files, f)
	m.sizes = append(m.sizes, fi.Size())
	m.of += fi.Size()
}

// opened is told of a file the first command opened; only a file opened
// while the run goes counts (decode opens its FILE to plan the run).
func (m *inputMeter) opened(f *os.File) {
	if m == nil {
		return
	}
	m.mu.Lock()
	running := m.running
	m.mu.Unlock()
	if running {
		m.add(f)
	}
}

func (m *inputMeter) start() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.running = true
	m.mu.Unlock()
}

// read returns the bytes read so far, and of how many.
func (m *inputMeter) read() (done, of int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, f := range m.files {
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			off = m.sizes[i] // closed: read to its end, or as far as the command wanted
		}
		done += min(off, m.sizes[i])
	}
	return done, m.of
}

// total is the progress of the whole for the view: frames for a decode of
// y4m, else bytes read, if the first command reads a file.
func (m *inputMeter) total(snap *sched.Snapshot) progress.Total {
	if m == nil {
		return progress.Total{}
	}
	secs := snap.Elapsed.Seconds()
	rate := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	m.mu.Lock()
	if m.video != "" && !m.counted && len(m.files) > 0 {
		m.frames, m.counted = y4mFrames(m.files[0], m.sizes[0]), true
	}
	video, frames, nfiles := m.video, m.frames, len(m.files)
	m.mu.Unlock()
	if video != "" && frames > 0 {
		for _, t := range snap.Tasks {
			if t.Name != video {
				continue
			}
			// decode's records are the header and then a frame each;
			// its own count is what it put out (it has no input).
			n := max(0, outRecords(snap, t.Name)-1)
			return progress.Total{Unit: "frames", Done: n, Of: frames, Rate: rate(n)}
		}
	}
	if nfiles == 0 {
		return progress.Total{}
	}
	done, of := m.read()
	return progress.Total{Unit: "bytes", Done: done, Of: of, Rate: rate(done)}
}

// outRecords is the records the task named name has put out.
func outRecords(snap *sched.Snapshot, name string) int64 {
	var n int64
	for _, e := range snap.Edges {
		if snap.Tasks[e.From].Name == name {
			n += e.Records
		}
	}
	return n
}

// y4mFrames is the number of frames of the y4m file f of size bytes,
// reading its header where it is (f's offset does not move); 0 when f is
// not y4m. Frames are taken to carry no parameters ("FRAME\n"), as
// ffmpeg writes them.
func y4mFrames(f *os.File, size int64) int64 {
	line, err := y4m.ReadHeaderLine(bufio.NewReader(io.NewSectionReader(f, 0, min(size, y4m.MaxHeaderLine+1))))
	if err != nil {
		return 0
	}
	h, err := y4m.ParseHeader(line)
	if err != nil {
		return 0
	}
	l, err := h.Layout()
	if err != nil || l.FrameSize() <= 0 {
		return 0
	}
	return (size - int64(len(line))) / int64(len("FRAME\n")+l.FrameSize())
}

// outSwitch is where a job's in-process tasks write their messages (and,
// when it is the terminal the view is on, their standard output): the
// Runner's writer, or while the live view is up, the view's, which prints
// above the view (package progress). External programs write to the
// Runner's own: theirs stays the file it was, and may cut through the
// view.
type outSwitch struct {
	mu  sync.Mutex
	w   io.Writer
	via io.Writer
}

func (s *outSwitch) set(w io.Writer) {
	s.mu.Lock()
	s.via = w
	s.mu.Unlock()
}

func (s *outSwitch) Write(p []byte) (int, error) {
	s.mu.Lock()
	w := s.via
	s.mu.Unlock()
	if w == nil {
		w = s.w
	}
	return w.Write(p)
}
