package sedlang

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// IO is what a run needs of the world outside its stream: the files its
// script names. Any field may be nil: a file that cannot be opened is then
// as GNU treats one it cannot read (r and R read nothing) or, for w and
// W, an error of Run.Start.
type IO struct {
	// Open opens a file for r and R.
	Open func(name string) (io.ReadCloser, error)
	// Create creates (or truncates) a file for w, W and s///w.
	Create func(name string) (io.WriteCloser, error)
	// Stderr is where "w /dev/stderr" writes.
	Stderr io.Writer
	// Stdout, when set, is where "w /dev/stdout" writes records (split at
	// newlines as the output is); it is the output otherwise. sed -i sets
	// it, as its output goes to the file it edits.
	Stdout func(rec []byte) error
	// Stop, if set, is called now and then while a script loops (a b, t
	// or T jumping back, D starting over) without reading input: an error
	// from it ends the run with that error, so that a cancelled run does
	// not spin in ":a;ba" forever, as GNU sed would.
	Stop func() error
	// MaxSpace, if not 0, is the most bytes the pattern or hold space may
	// hold: past it the run ends with a *SpaceError instead of taking the
	// machine's memory (":a;G;h;ba" doubles it each time round).
	MaxSpace int
}

// SpaceError is the error of a run whose pattern or hold space grew
// past IO.MaxSpace.
type SpaceError struct {
	Max int
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("the pattern or hold space grew past %d bytes", e.Max)
}

// framer turns the bytes a run writes into records, one line each (cut
// after each '\n', whatever the script's delimiter), as the records of a
// pipeline are: it passes on each line as it ends and keeps the start of
// an unfinished one until more comes or flush.
type framer struct {
	emit func([]byte) error
	tail []byte
}

// write passes the lines of data that end on, keeping the rest.
func (f *framer) write(data []byte) error {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			f.tail = append(f.tail, data...)
			return nil
		}
		line := data[:i+1]
		if len(f.tail) > 0 {
			f.tail = append(f.tail, line...)
			line = f.tail
		}
		if err := f.emit(line); err != nil {
			return err
		}
		f.tail = f.tail[:0]
		data = data[i+1:]
	}
	return nil
}

// flush passes on an unfinished last line, without a newline.
func (f *framer) flush() error {
	if len(f.tail) == 0 {
		return nil
	}
	err := f.emit(f.tail)
	f.tail = f.tail[:0]
	return err
}

// stream is a place lines go: the output, "w /dev/stdout", or a w file.
// As in GNU, a line written without its delimiter (the input's last line
// lacked one) leaves the stream owing it, and the stream writes it first
// if more follows.
type stream struct {
	write   func([]byte) error
	owes    bool
	delim   [1]byte
	closer  io.Closer     // the file, for Close
	flusher *bufio.Writer // its buffer
}

// line writes text as a line, with the delimiter if nl.
func (s *stream) line(text []byte, nl bool) error {
	if err := s.settle(); err != nil {
		return err
	}
	if err := s.write(text); err != nil {
		return err
	}
	if !nl {
		s.owes = true
		return nil
	}
	return s.write(s.delim[:])
}

// settle writes the delimiter the stream owes, if it owes one.
func (s *stream) settle() error {
	if !s.owes {
		return nil
	}
	s.owes = false
	return s.write(s.delim[:])
}

// close flushes and closes a file's stream.
func (s *stream) close() error {
	var err error
	if s.flusher != nil {
		err = s.flusher.Flush()
	}
	if s.closer != nil {
		if cerr := s.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// reader is a file R reads a line at a time; every R naming the file
// shares it.
type reader struct {
	name string
	rc   io.ReadCloser
	br   *bufio.Reader
	done bool // opened and found wanting, or read to its end
}
