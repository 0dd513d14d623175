package scripts

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPlan(t *testing.T) {
	p, err := Plan("/srv/Video Jobs", `decode | grep -v "it's" | /usr/bin/md5sum`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Stages {
		got = append(got, s.In+" -["+s.Name+": "+s.Filter+" as "+s.User+"]-> "+s.Out)
	}
	want := []string{
		"in -[1_decode: decode as pu_video_jo_1_decode]-> 1_decode",
		`1_decode -[2_grep: grep -v "it's" as pu_video_jo_2_grep]-> 2_grep`,
		"2_grep -[3_md5sum: /usr/bin/md5sum as pu_video_jo_3_md5sum]-> out",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stages:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range p.Stages {
		if len(s.User) > 32 || len(s.Group) > 32 {
			t.Errorf("%s: name longer than 32 bytes", s.User)
		}
	}
	for _, bad := range []string{"a > f", "tee @a | cat", "a; b", "a |"} {
		if _, err := Plan("/srv/x", bad); err == nil {
			t.Errorf("Plan(%q) accepted", bad)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "a b": "'a b'", "it's": `"it's"`, `it's "$x" \`: `"it's \"\$x\" \\"`, "": "''", "$x": "'$x'", "/a/b-c.d": "/a/b-c.d"} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func writeScripts(t *testing.T, p *Pipeline) string {
	t.Helper()
	out := t.TempDir()
	for name, text := range p.Files() {
		if err := os.WriteFile(filepath.Join(out, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestShellcheck: the scripts pass shellcheck, as the issue asks.
func TestShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is not installed; .ci/run installs it (Debian package shellcheck)")
		}
		t.Skip("shellcheck not installed (Debian package shellcheck; .ci/run installs it)")
	}
	p, err := Plan(filepath.Join(t.TempDir(), "spool"), `cat | grep -v "a'b \$x" | sort -u | tr a-z A-Z`)
	if err != nil {
		t.Fatal(err)
	}
	out := writeScripts(t, p)
	for _, name := range []string{"setup.sh", "launch.sh", "cleanup.sh"} {
		c := exec.Command(sc, "--shell=sh", filepath.Join(out, name))
		if b, err := c.CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", name, err, b)
		}
	}
}

// TestSetupRuns runs setup.sh with sh, the user and group commands
// replaced by stand-ins that log their arguments (creating system users
// is not a test's business), and checks the folders it made.
func TestSetupRuns(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	os.Mkdir(bin, 0o755)
	logf := filepath.Join(root, "log")
	for _, cmd := range []string{"getent", "groupadd", "useradd", "usermod", "chown"} {
		stub := "#!/bin/sh\necho " + cmd + " \"$@\" >> '" + logf + "'\n"
		if cmd == "getent" {
			stub += "exit 2\n" // nobody exists yet
		}
		os.WriteFile(filepath.Join(bin, cmd), []byte(stub), 0o755)
	}
	dir := filepath.Join(root, "spool")
	p, err := Plan(dir, "grep x | sort")
	if err != nil {
		t.Fatal(err)
	}
	out := writeScripts(t, p)
	c := exec.Command(sh, filepath.Join(out, "setup.sh"))
	c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("setup.sh: %v\n%s", err, b)
	}
	for _, tc := range []struct {
		path string
		mode fs.FileMode
	}{
		{"in", 0o770 | fs.ModeSetgid}, {"in/.tmp", 0o770 | fs.ModeSetgid}, {"in/.claim", 0o700},
		{"1_grep", 0o770 | fs.ModeSetgid}, {"1_grep/.lock", 0o700}, {"out", 0o770 | fs.ModeSetgid},
	} {
		fi, err := os.Stat(filepath.Join(dir, tc.path))
		if err != nil {
			t.Error(err)
			continue
		}
		if got := fi.Mode() & (fs.ModePerm | fs.ModeSetgid); got != tc.mode {
			t.Errorf("%s: mode %v, want %v", tc.path, got, tc.mode)
		}
	}
	b, _ := os.ReadFile(logf)
	for _, want := range []string{
		"groupadd --system pg_spool_1_grep",
		"useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin --gid pg_spool_2_sort pu_spool_2_sort",
		"usermod -a -G pg_spool_2_sort pu_spool_1_grep",
		"usermod -a -G pg_spool_out pu_spool_2_sort",
		"chown pu_spool_2_sort:pg_spool_2_sort " + dir + "/1_grep",
		"chown root:pg_spool_out " + dir + "/out",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("setup.sh did not run %q; ran:\n%s", want, b)
		}
	}
	// launch.sh, with sudo standing in (it runs the command after --)
	// and TPIPE a stand-in that says how it was called.
	os.WriteFile(filepath.Join(bin, "sudo"), []byte("#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n"), 0o755)
	fake := filepath.Join(bin, "fake-tpipe")
	os.WriteFile(fake, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\necho\n"), 0o755)
	c = exec.Command(sh, filepath.Join(out, "launch.sh"))
	c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "TPIPE="+fake)
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("launch.sh: %v\n%s", err, b)
	}
	for stage, want := range map[string]string{
		"1_grep": "[pmjq][" + dir + "/in][grep x][" + dir + "/1_grep]\n",
		"2_sort": "[pmjq][" + dir + "/1_grep][sort][" + dir + "/out]\n",
	} {
		if b, _ := os.ReadFile(filepath.Join(dir, ".log", stage+".log")); string(b) != want {
			t.Errorf("launch.sh ran %s as %q, want %q", stage, b, want)
		}
	}
}
