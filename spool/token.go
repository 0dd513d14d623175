package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/tpipe/tpipe/record/recfile"
	"github.com/tpipe/tpipe/spool/place"
)

// DefaultCodec is the compression of tokens when none is chosen: none.
// On a local disk (and on tmpfs) a spooled run of log lines was a quarter
// faster in CPU time with raw tokens than with S2, the cheapest codec,
// which spent 400 to 700 MB/s of one CPU to write a third of the bytes
// (bench/README.md, the spool section). S2 or zstd pay on a disk slower
// than that, or where space counts more than time.
const DefaultCodec = recfile.None

// BlockSize is the raw bytes of records in one block of a token.
const BlockSize = 256 << 10

// CorruptError is a token that failed its checks when read: it has been
// moved aside (to Aside) so that the next run makes it again.
type CorruptError struct {
	Path  string // where it was
	Aside string // where it is now; "" if it could not be moved
	Err   error
}

func (e *CorruptError) Error() string {
	msg := fmt.Sprintf("corrupt token %s (%v)", e.Path, e.Err)
	if e.Aside != "" {
		return msg + fmt.Sprintf("; moved to %s; run again to make it anew", e.Aside)
	}
	return msg + "; remove it and run again to make it anew"
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ReadToken calls each with every record of the token name of p, in
// order, until each returns an error (which ReadToken returns). rec is
// valid only during the call. maxRecord is the longest record the reader
// accepts. A token that fails its checks is moved aside and is a
// *CorruptError. It returns the bytes read from disk.
func ReadToken(p *place.Place, name string, maxRecord int, each func(rec []byte) error) (int64, error) {
	f, err := p.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, corrupt, err := readFile(f, filepath.Join(p.Dir(), name), maxRecord, each)
	if corrupt != nil {
		f.Close()
		if aside, aerr := p.Aside(name); aerr == nil {
			corrupt.Aside = aside
		}
		return n, corrupt
	}
	return n, err
}

// ReadWritten is ReadToken of a token read before its commit, through the
// file TokenWriter.OpenWritten gave, which the caller closes. A token that
// fails its checks (a bug of this process, or a disk that lost what it
// was given moments ago) is a *CorruptError and stays where it is.
func ReadWritten(f *os.File, maxRecord int, each func(rec []byte) error) (int64, error) {
	n, corrupt, err := readFile(f, f.Name(), maxRecord, each)
	if corrupt != nil {
		return n, corrupt
	}
	return n, err
}

// readFile calls each with the records of the token in f, at path, from
// its start. A token that fails its checks is corrupt; err is each's
// error as it is, or the reader's.
func readFile(f *os.File, path string, maxRecord int, each func(rec []byte) error) (n int64, corrupt *CorruptError, err error) {
	cr := &countReader{r: io.NewSectionReader(f, 0, math.MaxInt64)}
	r := readers.Get().(*recfile.Reader)
	defer readers.Put(r)
	r.Reset(cr, recfile.ReadLimit(BlockSize, maxRecord))
	for {
		rec, err := r.Next()
		if err != nil {
			corrupt, err := readErr(path, err)
			return cr.n, corrupt, err
		}
		if err := each(rec); err != nil {
			return cr.n, nil, err
		}
	}
}

// readErr sorts the error that ended a token's reading: nil at its end,
// a corrupt token, or a failure to read it. It is apart from readFile's
// loop because errors.As's target escapes: declared in the loop, it cost
// an allocation per record.
func readErr(path string, err error) (*CorruptError, error) {
	if err == io.EOF {
		return nil, nil
	}
	var ce *recfile.CorruptError
	if errors.As(err, &ce) {
		return &CorruptError{Path: path, Err: err}, nil
	}
	return nil, fmt.Errorf("read %s: %w", path, err)
}

// readers and writers keep the block memory of the recfile readers and
// writers of tokens from one token to the next: a run reads and writes
// hundreds of them, and allocating a block's buffers anew for each made
// the garbage collector a tenth of a spooled run. writers has a pool per
// codec.
var (
	readers = sync.Pool{New: func() any { return recfile.NewReader(nil, 0) }}
	writers [recfile.Zstd + 1]sync.Pool
)

// TokenWriter writes the records of one token: Add them, then Commit
// (under a name known before, or one made of the content, CommitContent)
// or Abort. A writer that lets the token be read before it is durable
// calls Finish, then OpenWritten for its readers, then CommitNoDirSync
// (and Place.SyncDir after it) or Abort. It is not safe for concurrent
// use.
type TokenWriter struct {
	name    string
	codec   recfile.Codec
	pend    *place.Pending
	w       *recfile.Writer
	hash    hash.Hash
	records int64
	bytes   int64
	written int64 // the file's bytes, kept when w goes back to its pool
}

// NewTokenWriter starts a token of p in codec c, to be named name (or,
// when name is "", by its content: see CommitContent).
func NewTokenWriter(p *place.Place, name string, c recfile.Codec) (*TokenWriter, error) {
	if int(c) >= len(writers) {
		return nil, fmt.Errorf("spool: unknown codec %v", c)
	}
	pname := name
	if pname == "" {
		pname = "content" // replaced at commit
	}
	pend, err := p.Create(pname)
	if err != nil {
		return nil, err
	}
	t := &TokenWriter{name: name, pend: pend}
	var w io.Writer = pend
	if name == "" {
		t.hash = sha256.New()
		w = io.MultiWriter(pend, t.hash)
	}
	t.codec = c
	if pw, ok := writers[c].Get().(*recfile.Writer); ok {
		t.w = pw
		t.w.Reset(w)
	} else {
		t.w = recfile.NewWriter(w, c, BlockSize)
	}
	return t, nil
}

// Name returns the name the token is to have; "" for one named by its
// content.
func (t *TokenWriter) Name() string { return t.name }

// Add appends a copy of rec.
func (t *TokenWriter) Add(rec []byte) error {
	t.records++
	t.bytes += int64(len(rec))
	return t.w.Add(rec)
}

// Records and Bytes count what was added; Written counts the bytes of the
// file so far.
func (t *TokenWriter) Records() int64 { return t.records }
func (t *TokenWriter) Bytes() int64   { return t.bytes }
func (t *TokenWriter) Written() int64 {
	if t.w != nil {
		return t.w.Written()
	}
	return t.written
}

// Commit ends the file and makes the token ready under the name given to
// NewTokenWriter. On error the token is aborted.
func (t *TokenWriter) Commit() error {
	err := t.w.Close()
	t.release()
	if err != nil {
		t.pend.Abort()
		return err
	}
	return t.pend.Commit()
}

// release gives the recfile writer back to the pool; the token's file
// has all its bytes, or is to be dropped.
func (t *TokenWriter) release() {
	if t.w != nil {
		t.written = t.w.Written()
		t.w.Reset(nil)
		writers[t.codec].Put(t.w)
		t.w = nil
	}
}

// CommitContent ends the file of a token made without a name and names
// it segment k with the hash of its content. When that token is there
// already (a rerun on the same input), nothing is written and cached is
// true.
func (t *TokenWriter) CommitContent(p *place.Place, k int) (name string, cached bool, err error) {
	err = t.w.Close()
	t.release()
	if err != nil {
		t.pend.Abort()
		return "", false, err
	}
	name = SegName(k, hex.EncodeToString(t.hash.Sum(nil))[:HashLen])
	if has, _ := p.Has(name); has {
		return name, true, t.pend.Abort()
	}
	return name, false, t.pend.CommitAs(name)
}

// Finish ends the file: every record is in it. A token made without a
// name is named segment k with the hash of its content; Finish returns the
// token's name.
func (t *TokenWriter) Finish(k int) (string, error) {
	err := t.w.Close()
	t.release()
	if err == nil && t.name == "" {
		t.name = SegName(k, hex.EncodeToString(t.hash.Sum(nil))[:HashLen])
		err = t.pend.Rename(t.name)
	}
	if err != nil {
		t.pend.Abort()
	}
	return t.name, err
}

// OpenWritten opens the finished token for reading before it is
// committed (see place.Pending.OpenWritten); read it with ReadWritten.
func (t *TokenWriter) OpenWritten() (*os.File, error) { return t.pend.OpenWritten() }

// CommitNoDirSync makes the finished token ready under its name, its
// file synced, its name not yet durable (place.Pending.CommitNoDirSync).
// On error the token is aborted.
func (t *TokenWriter) CommitNoDirSync() error { return t.pend.CommitNoDirSync() }

// Abort drops the token.
func (t *TokenWriter) Abort() error {
	t.release()
	return t.pend.Abort()
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// WriteEnd completes place p, of causal hash gen, with the names of its
// segments in order and the exit status of the task that wrote them (a
// rerun that finds the place complete reports it again).
func WriteEnd(p *place.Place, gen string, names []string, status int) error {
	t, err := NewTokenWriter(p, EndName(gen), recfile.None) // a few names
	if err != nil {
		return err
	}
	recs := append(names[:len(names):len(names)], "status "+strconv.Itoa(status))
	for _, n := range recs {
		if err := t.Add([]byte(n)); err != nil {
			t.Abort()
			return err
		}
	}
	return t.Commit()
}

// ReadEnd returns the segments of place p recorded by its end token for
// gen, and the status WriteEnd was given; ok is false when there is no
// end token, or when a segment it names is gone (the place must then be
// made again). An end token that fails its checks is moved aside and is
// a *CorruptError.
func ReadEnd(p *place.Place, gen string) (names []string, status int, ok bool, err error) {
	if has, err := p.Has(EndName(gen)); err != nil || !has {
		return nil, 0, false, err
	}
	var recs []string
	_, err = ReadToken(p, EndName(gen), place.MaxName, func(rec []byte) error {
		recs = append(recs, string(rec))
		return nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	bad := func(why string) error {
		path := filepath.Join(p.Dir(), EndName(gen))
		aside, _ := p.Aside(EndName(gen))
		return &CorruptError{Path: path, Aside: aside, Err: errors.New(why)}
	}
	if len(recs) == 0 {
		return nil, 0, false, bad("no status")
	}
	last, recs := recs[len(recs)-1], recs[:len(recs)-1]
	s, found := strings.CutPrefix(last, "status ")
	status, serr := strconv.Atoi(s)
	if !found || serr != nil {
		return nil, 0, false, bad(fmt.Sprintf("%q is not a status", last))
	}
	for _, n := range recs {
		if _, ok := ParseSeg(n); !ok {
			return nil, 0, false, bad(fmt.Sprintf("%q is not a segment's name", n))
		}
		if has, err := p.Has(n); err != nil || !has {
			return nil, 0, false, err
		}
	}
	return recs, status, true, nil
}

// Stderr is what one task wrote to its standard error in a run: its
// first bytes, and the count of those written past them and not kept.
type Stderr struct {
	Bytes []byte
	Lost  int64
}

// WriteStderr keeps errs, the standard errors of the tasks of the step
// that makes place p of causal hash gen, in task order, as the token
// StderrName(gen), replacing one of an earlier run. The step writes it
// before its end tokens, so that an end token of gen implies it: a crash
// between the two leaves a place that is not complete, and the step runs
// again. It holds two records per task: "lost N", then the bytes (a few,
// so not compressed).
func WriteStderr(p *place.Place, gen string, errs []Stderr) error {
	t, err := NewTokenWriter(p, StderrName(gen), recfile.None)
	if err != nil {
		return err
	}
	for _, e := range errs {
		if err := t.Add([]byte("lost " + strconv.FormatInt(e.Lost, 10))); err != nil {
			t.Abort()
			return err
		}
		if err := t.Add(e.Bytes); err != nil {
			t.Abort()
			return err
		}
	}
	return t.Commit()
}

// ReadStderr returns the standard errors WriteStderr kept for gen in
// place p; ok is false when there is no such token. maxBytes is the
// most a task's may hold. A token that fails its checks is moved aside
// and is a *CorruptError.
func ReadStderr(p *place.Place, gen string, maxBytes int) (errs []Stderr, ok bool, err error) {
	name := StderrName(gen)
	if has, err := p.Has(name); err != nil || !has {
		return nil, false, err
	}
	var recs [][]byte
	_, err = ReadToken(p, name, max(maxBytes, place.MaxName), func(rec []byte) error {
		recs = append(recs, append([]byte(nil), rec...))
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	bad := func(why string) error {
		aside, _ := p.Aside(name)
		return &CorruptError{Path: filepath.Join(p.Dir(), name), Aside: aside, Err: errors.New(why)}
	}
	if len(recs)%2 != 0 {
		return nil, false, bad("a task's record is missing")
	}
	for k := 0; k < len(recs); k += 2 {
		s, found := strings.CutPrefix(string(recs[k]), "lost ")
		lost, perr := strconv.ParseInt(s, 10, 64)
		if !found || perr != nil || lost < 0 {
			return nil, false, bad(fmt.Sprintf("%.40q is not a count of bytes", recs[k]))
		}
		errs = append(errs, Stderr{Bytes: recs[k+1], Lost: lost})
	}
	return errs, true, nil
}
