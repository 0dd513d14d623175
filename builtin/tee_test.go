package builtin_test

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTeeSameAsGNU(t *testing.T) {
	in := "a\nb\n\nlast"
	for _, tc := range []struct {
		args  []string
		setup string // the files' contents before tee runs
	}{
		{args: nil},
		{args: []string{"o1"}},
		{args: []string{"o1", "o2"}, setup: "old\n"},
		{args: []string{"-a", "o1"}, setup: "old\n"},
		{args: []string{"o1", "-a", "o2"}, setup: "old\n"},
		{args: []string{"-i", "o1"}},
		{args: []string{"nodir/x", "o1"}},
	} {
		var res [2]result
		var files [2][2]string
		for i, run := range []func(t testing.TB, dir string, argv []string, stdin string) result{runGNU, runBuiltin} {
			dir := t.TempDir()
			for _, n := range []string{"o1", "o2"} {
				if tc.setup != "" {
					os.WriteFile(filepath.Join(dir, n), []byte(tc.setup), 0o666)
				}
			}
			res[i] = run(t, dir, append([]string{"tee"}, tc.args...), in)
			for j, n := range []string{"o1", "o2"} {
				data, _ := os.ReadFile(filepath.Join(dir, n))
				files[i][j] = string(data)
			}
		}
		if res[0].out != res[1].out || res[0].code != res[1].code || files[0] != files[1] {
			t.Errorf("tee %q:\n tpipe: %+v, files %q\n   GNU: %+v, files %q", tc.args, res[1], files[1], res[0], files[0])
		}
	}
}

func TestTeeErrors(t *testing.T) {
	dir := t.TempDir()
	filesSameStderr(t, dir, []filesCase{filesC("tee nodir/x", "a\n")})
	filesSameUsage(t, []filesCase{filesC("tee -x", "")})
}
