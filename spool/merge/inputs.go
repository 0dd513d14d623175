package merge

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tpipe/tpipe/runner"
	"github.com/tpipe/tpipe/spool/place"
)

// Substitute returns words with $1..$9 and ${N} replaced by paths[N-1]:
// the argv of tpipe's --inputs form. A reference past the last path, and
// a '$' followed by anything else, stay as they are. Each word stays one
// word whatever the paths hold.
func Substitute(words, paths []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if !strings.Contains(w, "$") {
			out[i] = w
			continue
		}
		var b strings.Builder
		for j := 0; j < len(w); {
			n, width := ref(w[j:])
			if width > 0 && n >= 1 && n <= len(paths) {
				b.WriteString(paths[n-1])
				j += width
				continue
			}
			b.WriteByte(w[j])
			j++
		}
		out[i] = b.String()
	}
	return out
}

// ref parses a reference at the start of s: $N (one digit) or ${N}; width
// is 0 when s does not start with one.
func ref(s string) (n, width int) {
	if len(s) < 2 || s[0] != '$' {
		return 0, 0
	}
	if s[1] >= '0' && s[1] <= '9' {
		return int(s[1] - '0'), 2
	}
	if s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 3 {
			return 0, 0
		}
		n, err := strconv.Atoi(s[2:end])
		if err != nil || n < 0 {
			return 0, 0
		}
		return n, end + 1
	}
	return 0, 0
}

// CommandRun is the Run of tpipe's --inputs form: words with $1..$n
// replaced by the held files' paths, run with $1 on stdin; its stdout goes
// to a token named after the set's key in out, or to stdout when out is
// nil. cfg is the runner's configuration for the command.
func CommandRun(words []string, out *place.Place, stdout io.Writer, cfg runner.Config) func(context.Context, *Held) (func() error, error) {
	return func(ctx context.Context, h *Held) (func() error, error) {
		c := &Command{Argv: Substitute(words, h.Paths), Stdin: h.Paths[0], Config: cfg, Out: stdout}
		var pending *place.Pending
		if out != nil {
			var err error
			if pending, err = out.Create(h.Key); err != nil {
				return nil, fmt.Errorf("output %s: %w", h.Key, err)
			}
			c.Stdout, c.Out = pending.File().Name(), nil
		}
		errs := &Tail{Max: 64 << 10}
		c.Stderr = errs
		if status := c.Run(ctx); status != 0 {
			if pending != nil {
				pending.Abort()
			}
			return nil, &Failure{Status: status, Stderr: errs.Bytes()}
		}
		if pending == nil {
			return nil, nil
		}
		return pending.Commit, nil
	}
}

// FailedDir is the failed place of the input folder dir: DIR.failed
// beside it.
func FailedDir(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".failed")
}

// RetryThenAside is the OnFailure of tpipe's --inputs form: a set is
// tried again retries times; then each file goes to the failed place of
// its folder (FailedDir), with NAME.stderr and NAME.status beside it.
func RetryThenAside(retries int) func(*Held, *Failure, int) Verdict {
	return func(h *Held, f *Failure, attempt int) Verdict {
		if attempt <= retries {
			return Verdict{Retry: true}
		}
		dests := make([]string, len(h.Names))
		for i, name := range h.Names {
			dir := FailedDir(h.places[i].Dir())
			dests[i] = filepath.Join(dir, name)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				continue // moveTo says so
			}
			why := f.Stderr
			if f.Status < 0 && f.Err != nil {
				why = append(why, f.Err.Error()+"\n"...)
			}
			os.WriteFile(dests[i]+".stderr", why, 0o600)
			os.WriteFile(dests[i]+".status", []byte(strconv.Itoa(f.Status)+"\n"), 0o600)
		}
		return Verdict{MoveTo: dests}
	}
}
