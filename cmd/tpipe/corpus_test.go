package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus/expected.txt from this run")

// corpusScripts are the test scripts of toybox and busybox for the tools
// tpipe builds in (testdata/corpus/README.md says where they come from).
var corpusScripts = []string{
	"toybox/grep.test", "busybox/grep.tests", "toybox/cat.test", "busybox/cat.tests",
	"toybox/seq.test", "busybox/seq.tests", "toybox/head.test", "busybox/head.tests",
	"toybox/tail.test", "busybox/tail.tests", "toybox/wc.test", "toybox/rev.test",
}

// TestCorpus runs every case of other implementations' test suites with
// bash and GNU's tools and with tpipe in their place (testdata/corpus/
// run.sh), and checks that each case does what expected.txt says: native
// (tpipe --no-fallback gives GNU's output and status), fallback (the
// builtin refuses and the system's program, run by tpipe, gives it), or
// wrong (docs/builtins.md says why). A case that changes
// class fails the test; -update rewrites the file after a change that
// meant it.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs some 700 processes")
	}
	for _, tool := range []string{"bash", "timeout", "gawk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	bin := tpipeBinary(t)
	// The scripts run three at a time: most of a case's time is spent
	// starting processes, and the machine has two cores.
	outs := make([][]byte, len(corpusScripts))
	errs := make([]error, len(corpusScripts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3)
	for i, script := range corpusScripts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.Command("bash", "testdata/corpus/run.sh", bin, script)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			outs[i], errs[i] = cmd.Output()
			if errs[i] != nil {
				errs[i] = fmt.Errorf("run.sh %s: %v\n%s", script, errs[i], stderr.String())
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	out := bytes.Join(outs, nil)
	got := classes(string(out))
	golden := filepath.Join("testdata", "corpus", "expected.txt")
	if *update {
		var b strings.Builder
		b.WriteString("# case\tclass\tname (go test ./cmd/tpipe -run Corpus -update rewrites the classes)\n")
		for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			b.WriteString(line + "\n")
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := classes(string(data))
	counts := map[string]int{}
	for id, c := range got {
		counts[c]++
		if want[id] != c {
			t.Errorf("%s: %s, expected.txt says %q", id, c, want[id])
		}
	}
	for id := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("%s: in expected.txt, not run", id)
		}
	}
	t.Logf("%d cases: %d native, %d fallback, %d wrong, %d run none of tpipe's tools",
		len(got), counts["native"], counts["fallback"], counts["wrong"], counts["n/a"])
}

// classes reads lines "CASE<TAB>CLASS<TAB>NAME" into a map from case to
// class; '#' starts a comment line.
func classes(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) >= 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}
