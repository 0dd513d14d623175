package place_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tpipe/tpipe/spool/place"
)

// A transition of a pmjq-style net: take each token of one place, write
// its output to another, then remove the input (at-least-once).
func Example() {
	dir, _ := os.MkdirTemp("", "place-example")
	defer os.RemoveAll(dir)
	w, err := place.NewWorker(place.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()
	in, _ := w.Open(filepath.Join(dir, "in"))
	out, _ := w.Open(filepath.Join(dir, "out"))
	in.Put("job1", func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err })

	in.Reap() // first take back what dead workers held
	names, _ := in.Tokens()
	for _, name := range names {
		c, err := in.Claim(name)
		if errors.Is(err, place.ErrClaimed) {
			continue // another worker was first
		}
		f, _ := c.Open()
		body, _ := io.ReadAll(f)
		f.Close()
		err = c.Complete(place.AtLeastOnce, func() error {
			return out.Put(name, func(w io.Writer) error { _, err := fmt.Fprintf(w, "%s, world", body); return err })
		})
		fmt.Println(name, err)
	}
	f, _ := out.Open("job1")
	body, _ := io.ReadAll(f)
	f.Close()
	left, _ := in.Tokens()
	fmt.Printf("%s; left in in: %d\n", body, len(left))
	// Output:
	// job1 <nil>
	// hello, world; left in in: 0
}
