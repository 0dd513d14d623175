package builtin_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpipe/tpipe/builtin"
	"github.com/tpipe/tpipe/graph"
	"github.com/tpipe/tpipe/record"
	"github.com/tpipe/tpipe/sched"
	"github.com/tpipe/tpipe/task"
)

// BenchmarkGrepFile runs grep on a file of 16 MB of log lines, the shape
// of bench/suite's GrepVsGNU, in process: grep -> a sink that drops what
// it reads. For profiles of the search itself (-cpuprofile), without
// process start or the pipe.
func BenchmarkGrepFile(b *testing.B) {
	dir := b.TempDir()
	name := filepath.Join(dir, "log")
	var text strings.Builder
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"}
	for i := 0; text.Len() < 16<<20; i++ {
		fmt.Fprintf(&text, "2026-11-21 12:%02d:%02d host%d user%d %s request %d took %dms\n",
			(i/60)%60, i%60, i%7, (i*7919)%97, levels[(i*31)%len(levels)], i, (i*13)%250)
	}
	if err := os.WriteFile(name, []byte(text.String()), 0o666); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{
		{"ERROR"}, {"user13 ERROR request 1234"}, {"-i", "error"}, {"-w", "ERROR"}, {"-x", "nothing"},
		{"-e", "ERROR", "-e", "WARN"}, {"^2026-11-21 12:0"}, {"ERROR.*took 1"}, {"took [0-9]ms"},
		{"-c", "INFO"}, {"-v", "zzz"}, {"-n", "ERROR"},
	} {
		argv := append([]string{"grep"}, append(args, name)...)
		b.Run(strings.Join(args, " "), func(b *testing.B) {
			b.SetBytes(int64(text.Len()))
			for b.Loop() {
				c, err := builtin.New(nil, argv)
				if err != nil {
					b.Fatal(err)
				}
				g := &graph.Graph{}
				me := g.Add(c.Name, 0, 1, c.Fn)
				sink := g.Add("sink", 1, 0, task.WriteTo(io.Discard, record.Lines))
				g.Connect(me, 0, sink, 0, 4)
				_, err = sched.Run(context.Background(), g, sched.Options{})
				if ee, ok := err.(*task.ExitError); err != nil && !(ok && ee.Code == 1) {
					b.Fatal(err)
				}
			}
		})
	}
}
