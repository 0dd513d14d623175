// Package progress is tpipe's live view: one line per task of a running
// graph (its records and bytes per second, the fill of its input queue,
// how busy it is, the bottleneck marked) and a line of overall progress
// with an ETA when the size of the input is known.
//
// The view draws whatever a Source gives it, sampled on the view's clock:
// a run of package sched (through runner) is one source; the places of a
// spool, counted on disk, can be another. On a terminal the view redraws
// in place at most ten times a second, through
// github.com/vbauerster/mpb/v8, and clears itself at the end; elsewhere it
// writes a plain line about once a second, fit for a log.
package progress

import "time"

// A Source is what a view shows. Sample is called from the view's own
// goroutine, one call at a time, about every Options.Interval; it must
// not block for long.
type Source interface {
	Sample() Frame
}

// SourceFunc makes a function a Source.
type SourceFunc func() Frame

// Sample calls f.
func (f SourceFunc) Sample() Frame { return f() }

// Frame is what a view shows at one moment.
type Frame struct {
	Elapsed time.Duration
	Rows    []Row
	// Total is the progress of the whole, if its size is known.
	Total Total
}

// Row is one line of the view: a task of a graph, or a place of a spool.
// Rates are per second and smoothed by the source.
type Row struct {
	Name    string
	Records float64 // records per second
	Bytes   float64 // bytes per second
	// Fill of Cap buffers of the row's input queue are taken; Cap 0 means
	// the row has no input queue (a source).
	Fill, Cap int
	// Busy is the share of time the row's task works rather than waits
	// for a queue, from 0 to 1.
	Busy float64
	// Bottleneck marks the row that holds the whole back.
	Bottleneck bool
	Done       bool
	// Unit names what Records counts, when it is not records of a queue
	// ("jobs" of a place): the row then shows no bytes, which such a
	// source does not know, and Fill is the count of waiting ones.
	Unit string
}

// Total is the progress of the whole, in Unit ("bytes" or "frames"): Done
// of Of, at Rate per second on average. Of 0 means the size is unknown;
// Unit "" means there is nothing to say.
type Total struct {
	Unit     string
	Done, Of int64
	Rate     float64
}

// Fraction returns how much of the whole is done, from 0 to 1, and
// whether that is known.
func (t Total) Fraction() (float64, bool) {
	if t.Of <= 0 {
		return 0, false
	}
	return min(1, max(0, float64(t.Done)/float64(t.Of))), true
}

// ETA returns the time left at the average rate, and whether it is known:
// not before the rate is, nor once everything has been read (what is
// left then, a sort's output, is not in the count).
func (t Total) ETA() (time.Duration, bool) {
	if t.Of <= 0 || t.Rate <= 0 || t.Done >= t.Of {
		return 0, false
	}
	left := max(0, t.Of-t.Done)
	return time.Duration(float64(left) / t.Rate * float64(time.Second)), true
}
