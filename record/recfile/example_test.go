package recfile_test

import (
	"fmt"
	"io"
	"log"

	"github.com/tpipe/tpipe/record/recfile"
)

// Records go to a temporary file, which has no name, and come back.
func Example() {
	f, err := recfile.CreateTemp("")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	w := recfile.NewWriter(f, recfile.Zstd, 0)
	for _, line := range []string{"one", "two", "three"} {
		if err := w.Add([]byte(line)); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	r := recfile.NewReader(io.NewSectionReader(f, 0, w.Written()), 0)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(rec))
	}
	// Output:
	// one
	// two
	// three
}
