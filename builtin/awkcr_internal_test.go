package builtin

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// awkCRReader doubles each '\r' that ends a line, wherever the reads cut
// the input.
func TestAwkCRReader(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"a\nb\n":           "a\nb\n",
		"a\r\nb\r\n":       "a\r\r\nb\r\r\n",
		"a\rb\r":           "a\rb\r\r",
		"\r":               "\r\r",
		"\r\r\n":           "\r\r\r\n",
		"x\r\ry":           "x\r\ry",
		"one\r\n\r\ntwo\r": "one\r\r\n\r\r\ntwo\r\r",
	} {
		for name, r := range map[string]io.Reader{
			"whole":    strings.NewReader(in),
			"bytewise": iotest.OneByteReader(strings.NewReader(in)),
			"halves":   iotest.HalfReader(strings.NewReader(in)),
		} {
			got, err := io.ReadAll(newAwkCRReader(r))
			if err != nil || string(got) != want {
				t.Errorf("%q read %s: %q, %v; want %q", in, name, got, err, want)
			}
		}
	}
}
