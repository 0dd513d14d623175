package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWcSameAsGNU(t *testing.T) {
	dir := filesFixture(t)
	text := "the quick  brown\tfox\n\njumps\x01over\x80 the\n lazy dog\n\x01\n\x80\xff\n a\x0bb\x0cc\rd\n"
	filesSameAsGNU(t, dir, []filesCase{
		filesC("wc", ""),
		filesC("wc", text),
		filesC("wc", "no newline"),
		filesC("wc -l", text),
		filesC("wc -w", text),
		filesC("wc -c", text),
		filesC("wc -m", text),
		filesC("wc -lw", text),
		filesC("wc -cl", text),
		filesC("wc -l -w -c", text),
		filesC("wc -lwmc", text),
		filesC("wc -l", "a\nb"),
		filesC("wc -w", "a\x00b c\x00\n"),
		filesC("wc -l", strings.Repeat("x\n", 200000)),
		filesC("wc -", text),
		filesC("wc -l -", text),
		filesC("wc words", ""),
		filesC("wc -l words", ""),
		filesC("wc -c long", ""),
		filesC("wc -lc long", ""),
		filesC("wc long f2", ""),
		filesC("wc -l long f2", ""),
		filesC("wc -w nonl words", ""),
		filesC("wc f2 -", text),
		filesC("wc -l f2 -", text),
		filesC("wc empty", ""),
		filesC("wc empty empty", ""),
		filesC("wc -l missing", ""),
		filesC("wc missing f2", ""),
		filesC("wc -l f2 missing", ""),
		filesC("wc d", ""),
		filesC("wc -l d f2", ""),
		filesC("wc a b", ""),
	})
}

func TestWcErrors(t *testing.T) {
	dir := filesFixture(t)
	filesSameStderr(t, dir, []filesCase{
		filesC("wc missing", ""),
		filesC("wc -l f2 missing", ""),
		filesC("wc d f2", ""),
	})
	filesSameUsage(t, []filesCase{
		filesC("wc -x", ""),
		filesC("wc --bogus", ""),
	})
}

// A pipe operand is opened once: wc needs no second open to count it after
// it looked at its type for the column width.
func TestWcPipeOperand(t *testing.T) {
	dir := filesFixture(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("a\nb\nc\n")
			f.Close()
		}
		done <- err
	}()
	got := runBuiltin(t, dir, []string{"wc", "-l", "fifo", "f2"}, "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := "      3 fifo\n      2 f2\n      5 total\n"; got.out != want || got.code != 0 {
		t.Errorf("wc -l fifo f2: %+v, want %q", got, want)
	}
}
