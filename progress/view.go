package progress

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Options say how a View shows its source.
type Options struct {
	// Terminal makes the view redraw in place on a terminal; without it
	// the view writes plain lines.
	Terminal bool
	// Delay is how long the view waits before it shows anything, so that
	// a run that ends sooner shows nothing.
	Delay time.Duration
	// Interval is the time between two samples: 0 means 100 ms on a
	// terminal (at most ten redraws a second) and 1 s for plain lines.
	Interval time.Duration
}

// Period returns the time between two samples (Interval, or its
// default).
func (o Options) Period() time.Duration {
	switch {
	case o.Interval > 0:
		return o.Interval
	case o.Terminal:
		return 100 * time.Millisecond
	}
	return time.Second
}

// The terminal view's layout: a name column, a gauge of the row's input
// queue (of the whole, on the last line), then its numbers.
const (
	maxNameWidth = 24
	gaugeWidth   = 12 // with its two bounds
)

// View shows a Source on a writer while something runs: Start starts its
// goroutine, Stop ends it and waits for it. On a terminal, text that must
// appear while the view is up goes through Writer, which prints it above
// the view instead of through it. A View's methods are safe for
// concurrent use; Stop is called once.
type View struct {
	w    io.Writer
	src  Source
	o    Options
	stop chan struct{}
	done chan struct{}

	// mu guards what Writer and Stop share with the view's goroutine.
	mu      sync.Mutex
	p       *mpb.Progress // the terminal view, once shown
	closing bool          // Stop has begun: mpb may no longer take a redraw
	ended   bool
	tail    []byte // a line written through Writer, not yet ended
	held    int    // bytes mpb holds for its next redraw

	// Owned by the view's goroutine until it has ended, then by Stop.
	bars    []*mpb.Bar // one per row, then the total
	refresh chan any
	nameW   int

	// fmu guards frame, which mpb's decorators read while they draw.
	fmu   sync.Mutex
	frame Frame
}

// Start starts showing src on w.
func Start(w io.Writer, src Source, o Options) *View {
	v := &View{w: w, src: src, o: o, stop: make(chan struct{}), done: make(chan struct{}), refresh: make(chan any)}
	go v.loop()
	return v
}

// loop samples the source until Stop. The first sample waits for Delay
// and then one interval: a file the source names has then been opened.
func (v *View) loop() {
	defer close(v.done)
	every := v.o.Period()
	wait := time.NewTimer(v.o.Delay + every)
	defer wait.Stop()
	select {
	case <-wait.C:
	case <-v.stop:
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		f := v.src.Sample()
		if v.o.Terminal {
			v.draw(f)
		} else {
			v.println(plainLine(f))
		}
		select {
		case <-tick.C:
		case <-v.stop:
			return
		}
	}
}

// println writes a plain line, after any line written through Writer.
func (v *View) println(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.w.Write(append([]byte(s), '\n'))
}

// draw shows f on the terminal: the first time, it makes a bar per row and
// one for the total.
func (v *View) draw(f Frame) {
	v.fmu.Lock()
	v.frame = f
	v.fmu.Unlock()
	if v.bars == nil {
		v.show(f)
	}
	for i, r := range f.Rows {
		if i < len(v.bars)-1 && r.Cap > 0 {
			v.bars[i].SetTotal(int64(r.Cap), false)
			v.bars[i].SetCurrent(int64(min(r.Fill, r.Cap)))
		}
	}
	if t, b := f.Total, v.bars[len(v.bars)-1]; t.Of > 0 {
		b.SetTotal(t.Of, false)
		b.SetCurrent(min(t.Done, t.Of))
	}
	v.refresh <- nil
}

// show makes the terminal view for the rows of f: its rows are matched by
// position from then on.
func (v *View) show(f Frame) {
	for _, r := range f.Rows {
		v.nameW = max(v.nameW, min(utf8.RuneCountInString(r.Name), maxNameWidth))
	}
	// Without a width of its own (mpb.WithWidth), mpb takes a terminal's
	// width at every redraw, so the view follows a resize; it cuts what
	// does not fit, and no line wraps.
	p := mpb.New(mpb.WithOutput(v.w), mpb.ForceTTY(), mpb.WithManualRefresh(v.refresh))
	gauge := mpb.BarStyle().Lbound("[").Rbound("]").Filler("#").Tip("").Padding(".")
	blank := mpb.BarStyle().Lbound(" ").Rbound(" ").Filler(" ").Tip("").Padding(" ")
	for i, r := range f.Rows {
		style := gauge
		if r.Cap == 0 {
			style = blank
		}
		v.bars = append(v.bars, p.New(0, style, mpb.BarWidth(gaugeWidth),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return v.name(i) }, decor.WC{W: v.nameW, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return v.stats(i) })),
		))
	}
	style := blank
	if f.Total.Of > 0 {
		style = gauge
	}
	v.bars = append(v.bars, p.New(0, style, mpb.BarWidth(gaugeWidth),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return "" }, decor.WC{W: v.nameW})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return v.stats(-1) })),
	))
	v.mu.Lock()
	v.p = p
	v.mu.Unlock()
}

// name is the name column of row i.
func (v *View) name(i int) string {
	v.fmu.Lock()
	defer v.fmu.Unlock()
	if i >= len(v.frame.Rows) {
		return ""
	}
	return cut(v.frame.Rows[i].Name, v.nameW)
}

// stats is the text after the gauge of row i (-1: the total).
func (v *View) stats(i int) string {
	v.fmu.Lock()
	defer v.fmu.Unlock()
	switch {
	case i < 0:
		return " " + totalText(v.frame.Total, v.frame.Elapsed)
	case i < len(v.frame.Rows):
		return rowStats(v.frame.Rows[i])
	}
	return ""
}

// cut shortens a name to n characters.
func cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Writer returns a writer whose lines appear above the terminal view while
// it is up, and go straight to the view's writer otherwise. A line is
// written whole: a write without a newline waits for the rest, at most
// until Stop.
func (v *View) Writer() io.Writer { return viewWriter{v} }

type viewWriter struct{ v *View }

func (w viewWriter) Write(b []byte) (int, error) {
	v := w.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.p == nil || v.ended {
		return v.w.Write(b)
	}
	v.tail = append(v.tail, b...)
	end := bytes.LastIndexByte(v.tail, '\n') + 1
	if end == 0 {
		return len(b), nil
	}
	lines := v.tail[:end]
	_, err := v.p.Write(lines)
	if errors.Is(err, mpb.ErrDone) {
		_, err = v.w.Write(lines)
	}
	v.tail = append(v.tail[:0], v.tail[end:]...)
	// mpb keeps what is written for its next redraw: past heldMax, redraw
	// now, so that a task writing fast holds bounded memory and waits
	// for the terminal as it would without the view.
	if v.held += end; v.held > heldMax && !v.closing {
		v.refresh <- nil
		v.held = 0
	}
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// heldMax is the most that lines written through Writer wait for the next
// redraw, in bytes.
const heldMax = 64 << 10

// Stop ends the view and waits for its goroutines. On a terminal it takes
// the view off the screen, leaving what was written through Writer.
func (v *View) Stop() {
	close(v.stop)
	<-v.done
	v.mu.Lock()
	p := v.p
	v.closing = true
	v.mu.Unlock()
	if p != nil {
		for _, b := range v.bars {
			b.Abort(true)
		}
		p.Wait()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ended = true
	if len(v.tail) > 0 {
		v.w.Write(v.tail)
		v.tail = nil
	}
}
