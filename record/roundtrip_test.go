package record_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/tpipe/tpipe/record"
)

type fatalfer interface {
	Fatalf(format string, args ...any)
}

// checkRoundTrip checks every way through the package against recs, the
// records a model finds in stream:
//
//   - a Scanner reading stream in reads of readSizes finds recs;
//   - appending recs with f gives stream back;
//   - a Writer fed stream in writes of writeSizes finds recs;
//   - NewReader over recs, read in reads of readSizes, gives stream back.
func checkRoundTrip(t fatalfer, f record.Framing, stream []byte, recs []string, maxSize int, readSizes, writeSizes []int) {
	scanned, err := scanAll(&chunkReader{data: stream, sizes: readSizes}, f, maxSize)
	if err != nil || !slices.Equal(scanned, recs) {
		t.Fatalf("Scanner: %q, %v; want %q", scanned, err, recs)
	}
	if enc := encode(f, scanned); !bytes.Equal(enc, stream) {
		t.Fatalf("Append of the records = %q, want %q", enc, stream)
	}
	written, err := writeChunks(stream, writeSizes, f, maxSize)
	if err != nil || !slices.Equal(written, recs) {
		t.Fatalf("Writer: %q, %v; want %q", written, err, recs)
	}
	r := record.NewReader(&reusingSource{recs: recs}, f)
	var back []byte
	for i := 0; ; i++ {
		p := make([]byte, readSizes[i%len(readSizes)])
		n, err := r.Read(p)
		back = append(back, p[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Reader: %v", err)
		}
	}
	if !bytes.Equal(back, stream) {
		t.Fatalf("Reader gave %q, want %q", back, stream)
	}
}

// genSizes generates chunk sizes for reads or writes.
var genSizes = rapid.SliceOfN(rapid.OneOf(rapid.IntRange(1, 8), rapid.IntRange(1, 300)), 1, 10)

// TestDelimitedProperty checks Lines and NUL on random streams against
// the model splitAfter.
func TestDelimitedProperty(t *testing.T) {
	for _, f := range []record.Framing{record.Lines, record.NUL} {
		delim := byte('\n')
		if f == record.NUL {
			delim = 0
		}
		t.Run(f.Name(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				alphabet := rapid.SampledFrom([]byte{'a', 'b', '\n', '\n', 0, 0, '\r', 0xff})
				stream := rapid.SliceOfN(alphabet, 0, 500).Draw(t, "stream")
				recs := splitAfter(string(stream), delim)
				longest := 0
				for _, r := range recs {
					longest = max(longest, len(r))
				}
				maxSize := longest + rapid.IntRange(0, 3).Draw(t, "slack")
				maxSize = max(maxSize, 1)
				checkRoundTrip(t, f, stream, recs, maxSize,
					genSizes.Draw(t, "reads"), genSizes.Draw(t, "writes"))
			})
		})
	}
}

// TestLengthPrefixedProperty checks LengthPrefixed on random record lists.
func TestLengthPrefixedProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(rapid.StringN(0, 40, -1), 0, 30).Draw(t, "records")
		longest := 0
		for _, r := range recs {
			longest = max(longest, len(r))
		}
		maxSize := max(1, longest+rapid.IntRange(0, 3).Draw(t, "slack"))
		stream := encode(record.LengthPrefixed, recs)
		checkRoundTrip(t, record.LengthPrefixed, stream, recs, maxSize,
			genSizes.Draw(t, "reads"), genSizes.Draw(t, "writes"))
	})
}

// TestFixedProperty checks Fixed(n) on random lists of n-byte records.
func TestFixedProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 20).Draw(t, "n")
		rec := rapid.Map(rapid.SliceOfN(rapid.Byte(), n, n), func(b []byte) string { return string(b) })
		recs := rapid.SliceOfN(rec, 0, 30).Draw(t, "records")
		f := record.Fixed(n)
		stream := encode(f, recs)
		checkRoundTrip(t, f, stream, recs, n+rapid.IntRange(0, 3).Draw(t, "slack"),
			genSizes.Draw(t, "reads"), genSizes.Draw(t, "writes"))
	})
}

// TestTooLargeProperty checks that a Scanner and a Writer over a stream
// with a record longer than the record size both return the records
// before it, then a TooLargeError.
func TestTooLargeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]byte{'a', '\n', '\n'})
		stream := rapid.SliceOfN(alphabet, 1, 300).Draw(t, "stream")
		recs := splitAfter(string(stream), '\n')
		longest := 0
		for _, r := range recs {
			longest = max(longest, len(r))
		}
		maxSize := rapid.IntRange(1, longest).Draw(t, "max")
		if maxSize == longest {
			maxSize-- // some record must be too large
			if maxSize == 0 {
				t.Skip("every record is one byte")
			}
		}
		i := slices.IndexFunc(recs, func(r string) bool { return len(r) > maxSize })
		check := func(how string, got []string, err error) {
			var tl *record.TooLargeError
			if !slices.Equal(got, recs[:i]) || !errors.As(err, &tl) {
				t.Fatalf("%s: %q, %v; want %q and a TooLargeError", how, got, err, recs[:i])
			}
			if tl.Max != maxSize || tl.Size <= maxSize || tl.Size > len(recs[i]) || (!tl.AtLeast && tl.Size != len(recs[i])) {
				t.Fatalf("%s: %+v for a record of %d bytes", how, *tl, len(recs[i]))
			}
		}
		got, err := scanAll(&chunkReader{data: stream, sizes: genSizes.Draw(t, "reads")}, record.Lines, maxSize)
		check("Scanner", got, err)
		got, err = writeChunks(stream, genSizes.Draw(t, "writes"), record.Lines, maxSize)
		check("Writer", got, err)
	})
}

// fuzzSizes are the chunk sizes of the fuzz tests: small enough to split
// records, varied enough to move the splits around.
var fuzzSizes = []int{1, 3, 64, 7, 2}

func fuzzDelimited(f *testing.F, fr record.Framing, delim byte) {
	for _, seed := range []string{"", "a", "\n", "\x00", "a\nb", "a\x00b\x00", "\n\n\x00\x00", "abc\r\n\xff\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		recs := splitAfter(string(stream), delim)
		checkRoundTrip(t, fr, stream, recs, len(stream)+1, fuzzSizes, fuzzSizes[1:])
	})
}

func FuzzLinesRoundTrip(f *testing.F) { fuzzDelimited(f, record.Lines, '\n') }

func FuzzNULRoundTrip(f *testing.F) { fuzzDelimited(f, record.NUL, 0) }

// FuzzLengthPrefixed feeds arbitrary bytes to LengthPrefixed: the Scanner
// and the Writer must agree, and whatever records come out must encode back
// to the start of the stream.
func FuzzLengthPrefixed(f *testing.F) {
	for _, seed := range []string{"", "\x00\x00\x00\x00", "\x00\x00\x00\x01a", "\x00\x00\x00\x02a", "\x00\x00", "\xff\xff\xff\xff"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		const maxSize = 64
		scanned, serr := scanAll(&chunkReader{data: stream, sizes: fuzzSizes}, record.LengthPrefixed, maxSize)
		written, werr := writeChunks(stream, fuzzSizes, record.LengthPrefixed, maxSize)
		if !slices.Equal(scanned, written) || (serr == nil) != (werr == nil) {
			t.Fatalf("Scanner: %q, %v; Writer: %q, %v", scanned, serr, written, werr)
		}
		enc := encode(record.LengthPrefixed, scanned)
		if !bytes.HasPrefix(stream, enc) || (serr == nil && len(enc) != len(stream)) {
			t.Fatalf("records %q encode to %q, not a prefix of %q", scanned, enc, stream)
		}
		if serr != nil && !errors.Is(serr, io.ErrUnexpectedEOF) && !errors.Is(serr, record.ErrTooLarge) {
			t.Fatalf("unexpected error %v", serr)
		}
	})
}
