package record

import (
	"fmt"
	"io"
)

// minScanBuf is the smallest buffer a Scanner reads into, so that small
// record sizes do not cost a read call per record.
const minScanBuf = 32 << 10

// Scanner reads the records of a byte stream framed by a Framing. It works
// like bufio.Scanner, with a fixed limit on the record size instead of a
// growing buffer, errors that say which framing failed, and a clean EOF
// told apart from a stream cut inside a record.
//
// Scan blocks in the underlying reader's Read. The zero Scanner is not
// usable: create one with NewScanner. A Scanner is not safe for concurrent
// use.
type Scanner struct {
	r     io.Reader
	c     cutter
	buf   []byte // buf[start:end] holds bytes read and not yet returned
	start int
	end   int
	token []byte

	err     error // sticky, as returned by Err; never io.EOF
	readErr error // read error to report once the buffer holds no record
	eof     bool
	done    bool
	short   bool
}

// NewScanner returns a Scanner reading records of at most maxSize bytes
// from r. The limit counts a '\n' or '\x00' ending but not the header of
// LengthPrefixed. The Scanner's buffer starts at up to firstScanBuf bytes
// and doubles while a record does not fit, up to maxSize+f.Overhead()+1
// bytes: a large limit (a line of up to a gigabyte) costs memory only
// when such a record comes.
//
// NewScanner panics if maxSize < 1.
func NewScanner(r io.Reader, f Framing, maxSize int) *Scanner {
	if maxSize < 1 {
		panic("record: NewScanner: record size < 1")
	}
	c := newCutter(f, maxSize)
	return &Scanner{r: r, c: c, buf: make([]byte, max(min(c.limit, firstScanBuf), minScanBuf))}
}

// firstScanBuf is the most a Scanner's buffer starts with.
const firstScanBuf = 256 << 10

// Scan advances to the next record, which Record then returns. It returns
// false at the end of the stream or on the first error, after which it
// keeps returning false and Err tells which. Records complete in the buffer
// when the reader fails are returned before the read error.
func (s *Scanner) Scan() bool {
	if s.done {
		return false
	}
	for {
		if s.end > s.start || s.eof {
			advance, token, err := s.c.cut(s.buf[s.start:s.end], s.eof)
			if err != nil {
				s.fail(err)
				return false
			}
			s.start += advance
			if s.eof && advance == 0 {
				// Nothing more can come out of the buffer.
				s.done = true
			}
			if token != nil {
				s.token = token
				return true
			}
			if s.done {
				s.token = nil
				return false
			}
			if advance > 0 {
				continue
			}
		}
		if s.readErr != nil {
			s.fail(s.readErr)
			return false
		}
		s.fill()
	}
}

func (s *Scanner) fail(err error) {
	s.err, s.done, s.token = err, true, nil
}

// maxEmptyReads is how many (0, nil) reads in a row fill tolerates, as in
// bufio.Scanner.
const maxEmptyReads = 100

// fill moves the unfinished record to the front of the buffer, grows the
// buffer if that record fills it, and reads after it. There is always
// room: cut fails rather than let an unfinished record grow past the
// limit.
func (s *Scanner) fill() {
	if s.start > 0 {
		s.end = copy(s.buf, s.buf[s.start:s.end])
		s.start = 0
	}
	if s.end == len(s.buf) {
		buf := make([]byte, min(2*len(s.buf), max(s.c.limit, len(s.buf)+1)))
		copy(buf, s.buf[:s.end])
		s.buf = buf
	}
	for range maxEmptyReads {
		want := len(s.buf) - s.end
		n, err := s.r.Read(s.buf[s.end:])
		if n < 0 || n > want {
			s.readErr = fmt.Errorf("record: read: reader returned %d bytes for a buffer of %d", n, want)
			return
		}
		s.short = n < want
		s.end += n
		if err == io.EOF {
			s.eof = true
			return
		}
		if err != nil {
			s.readErr = fmt.Errorf("record: read: %w", err)
			return
		}
		if n > 0 {
			return
		}
	}
	s.readErr = fmt.Errorf("record: read: %w", io.ErrNoProgress)
}

// Record returns the record found by the last successful Scan. It aliases
// the Scanner's buffer and is valid until the next call to Scan; copy it to
// keep it.
func (s *Scanner) Record() []byte { return s.token }

// Err returns the first error the Scanner met, or nil if the stream ended
// cleanly. A stream cut inside a record gives an error wrapping
// io.ErrUnexpectedEOF; a record over the limit, a *TooLargeError.
func (s *Scanner) Err() error { return s.err }

// ShortRead reports whether the last read into the buffer returned fewer
// bytes than it had room for. It hints that the reader is slow, such as a
// pipe: a caller batching records may hand over what it has rather than
// block in the next Scan.
func (s *Scanner) ShortRead() bool { return s.short }
