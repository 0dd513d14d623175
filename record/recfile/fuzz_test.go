package recfile_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/tpipe/tpipe/record/recfile"
)

// FuzzReader: whatever the bytes, the Reader returns records or an error,
// never panics, and allocates no more than its limit per block; a file it
// reads to the end with no error gives back its records when rewritten.
func FuzzReader(f *testing.F) {
	// Small seeds: the fuzzer minimizes what it finds, slowly on large
	// inputs.
	small := [][]byte{[]byte("a"), {}, []byte("line\n"), {0, 0xff}, []byte("abcabcabcabcabcabcabc")}
	for _, c := range codecs {
		f.Add(writeFile(f, c, 8, small))
	}
	f.Add(writeFile(f, recfile.Zstd, 0, nil))
	f.Add([]byte("tpRF\x01\x02\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readAll(data, 1<<16)
		if err != nil {
			var ce *recfile.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			return
		}
		again, err := readAll(writeFile(t, recfile.S2, 64, got), 1<<16)
		if err != nil || len(again) != len(got) {
			t.Fatalf("rewritten: %d records, %v; want %d", len(again), err, len(got))
		}
		for i := range got {
			if !bytes.Equal(got[i], again[i]) {
				t.Fatalf("record %d changed when rewritten", i)
			}
		}
		var b recfile.Block
		r := recfile.NewReader(bytes.NewReader(data), 1<<16)
		for {
			if err := r.ReadBlock(&b); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("ReadBlock failed where Next did not: %v", err)
			}
		}
	})
}
