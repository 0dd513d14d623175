package vtscreen

import (
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestScreen(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"text and newlines", []string{"ab\ncd\n"}, []string{"ab", "cd"}},
		{"carriage return overwrites", []string{"abc\rx"}, []string{"xbc"}},
		{"a redraw in place", []string{"one\ntwo\n", "\x1b[2A\x1b[J", "ONE\n"}, []string{"ONE"}},
		{"erase in line", []string{"abcdef\r\x1b[3C\x1b[K"}, []string{"abc"}},
		{"a sequence cut between writes", []string{"x\n\x1b[", "1A\x1b[Jy"}, []string{"y"}},
		{"a character cut between writes", []string{"\xc3", "\xa9"}, []string{"é"}},
		{"other sequences are skipped", []string{"\x1b[?25la\x1b[31mb\x1b[0m\x1b7"}, []string{"ab"}},
		{"up stops at the top", []string{"a\x1b[9Ab"}, []string{"ab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Screen
			for _, w := range tt.writes {
				s.Write([]byte(w))
			}
			if got := s.Lines(); !slices.Equal(got, tt.want) {
				t.Errorf("lines %q, want %q", got, tt.want)
			}
		})
	}
}

// Bytes fed in any split read the same as fed whole.
func FuzzScreenSplit(f *testing.F) {
	f.Add([]byte("a\x1b[2A\x1b[Jb\r\nc\xc3\xa9"), 3)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		if cut < 0 || cut > len(b) {
			return
		}
		var whole, split Screen
		whole.Write(b)
		split.Write(b[:cut])
		split.Write(b[cut:])
		if whole.String() != split.String() {
			t.Fatalf("whole %q, split at %d %q", whole.String(), cut, split.String())
		}
	})
}
