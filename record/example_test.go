package record_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tpipe/tpipe/record"
)

func ExampleScanner() {
	// The last line has no '\n': it is a record all the same.
	s := record.NewScanner(strings.NewReader("one\n\nthree"), record.Lines, 64)
	for s.Scan() {
		fmt.Printf("%q\n", s.Record())
	}
	if err := s.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// "one\n"
	// "\n"
	// "three"
}

func ExampleScanner_tooLarge() {
	s := record.NewScanner(strings.NewReader("short\nmuch too long\n"), record.Lines, 8)
	for s.Scan() {
		fmt.Printf("%q\n", s.Record())
	}
	fmt.Println(s.Err(), errors.Is(s.Err(), record.ErrTooLarge))
	// Output:
	// "short\n"
	// record of 14 bytes exceeds the record size of 8 bytes true
}

// printSink prints the records written to it.
type printSink struct{}

func (printSink) Write(rec []byte) error {
	fmt.Printf("%q\n", rec)
	return nil
}

func ExampleWriter() {
	// A Writer cuts what is written to it into records, across Writes.
	w := record.NewWriter(printSink{}, record.NUL, 64)
	io.WriteString(w, "a.txt\x00b")
	io.WriteString(w, ".txt\x00c.txt")
	if err := w.Close(); err != nil { // Close flushes "c.txt"
		fmt.Println(err)
	}
	// Output:
	// "a.txt\x00"
	// "b.txt\x00"
	// "c.txt"
}

// sliceSource is a Source over a list of records.
type sliceSource []string

func (s *sliceSource) Read() ([]byte, error) {
	if len(*s) == 0 {
		return nil, io.EOF
	}
	rec := (*s)[0]
	*s = (*s)[1:]
	return []byte(rec), nil
}

func ExampleNewReader() {
	src := sliceSource{"hello\n", "world\n"}
	io.Copy(os.Stdout, record.NewReader(&src, record.Lines))
	// Output:
	// hello
	// world
}

func ExampleParseFraming() {
	for _, s := range []string{"lines", "fixed:4K", "csv"} {
		f, err := record.ParseFraming(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(f.Name(), f.Overhead())
	}
	// Output:
	// lines 0
	// fixed:4096 0
	// record: unknown framing "csv" (want lines, nul, length or fixed:N)
}
