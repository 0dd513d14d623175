package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"
)

// leakCheck runs the tests and then fails the binary if goroutines leaked,
// as goleak.VerifyTestMain does; testscript.Main needs to own TestMain.
type leakCheck struct{ m *testing.M }

func (l leakCheck) Run() int {
	code := l.m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

func TestMain(m *testing.M) {
	// The pseudo-terminal test runs this binary as tpipe itself.
	if os.Getenv("TPIPE_TEST_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(leakCheck{m}, map[string]func(){
		"tpipe": func() { os.Exit(run(context.Background(), commandArgs(os.Args), os.Stdin, os.Stdout, os.Stderr)) },
		"pmjq":  func() { os.Exit(run(context.Background(), commandArgs(os.Args), os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI sessions in testdata/script: each .txtar file is
// a readable session of commands, their output and their status.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkjobs": mkjobs,
			"nfiles": nfiles,
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("LC_ALL", "C")
			e.Setenv("TPIPE_HISTORY", e.WorkDir+"/.history")
			// tpipe bench builds the suite from the checkout
			// (bench.txtar cds there): go needs its caches.
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			e.Setenv("TPIPE_CHECKOUT", root)
			for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOTOOLCHAIN"} {
				out, err := exec.Command("go", "env", v).Output()
				if err != nil {
					return err
				}
				e.Setenv(v, strings.TrimSpace(string(out)))
			}
			return nil
		},
	})
}

// mkjobs DIR N: N files 1.txt .. N.txt in DIR, each holding its number
// and a newline (pmjq's test cases make their jobs so).
func mkjobs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkjobs DIR N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	for i := 1; i <= n; i++ {
		ts.Check(os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".txt"), []byte(strconv.Itoa(i)+"\n"), 0o644))
	}
}

// nfiles DIR N: DIR holds N files, not counting those whose names start
// with a dot (the protocol's).
func nfiles(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: nfiles DIR N")
	}
	ents, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") && e.Type().IsRegular() {
			n++
		}
	}
	if (strconv.Itoa(n) == args[1]) == neg {
		ts.Fatalf("%s holds %d files, want %s%s", args[0], n, map[bool]string{true: "not ", false: ""}[neg], args[1])
	}
}
