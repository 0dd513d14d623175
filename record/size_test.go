package record_test

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/tpipe/tpipe/record"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int // 0: an error
	}{
		{"1", 1},
		{"512", 512},
		{"512B", 512},
		{"64K", 64 << 10},
		{"64k", 64 << 10},
		{"64KB", 64 << 10},
		{"64KiB", 64 << 10},
		{"64kib", 64 << 10},
		{"4M", 4 << 20},
		{"4MiB", 4 << 20},
		{"1G", 1 << 30},
		{"1GB", 1 << 30},
		{"1T", 1 << 40},
		{"2TiB", 2 << 40},
		{"3P", 3 << 50},
		{"7E", 7 << 60},
		{"007", 7},

		{"", 0},
		{"0", 0},
		{"0K", 0},
		{"-1", 0},
		{"+1", 0},
		{"abc", 0},
		{"K", 0},
		{"1.5K", 0},
		{"8E", 0},
		{"1X", 0},
		{"1 K", 0},
		{" 1", 0},
		{"1KiBB", 0},
		{"1iB", 0},
		{"99999999999999999999", 0},
		{"99999999999999999999G", 0},
		{strconv.Itoa(math.MaxInt), math.MaxInt},
		{strconv.Itoa(math.MaxInt) + "K", 0},
		{strconv.FormatUint(math.MaxInt/(1<<30)+1, 10) + "G", 0},
	}
	for _, tt := range tests {
		got, err := record.ParseSize(tt.in)
		if tt.want == 0 {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSizeErrorText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", `record: size "0": must be positive`},
		{"-1", `record: size "-1": must be positive`},
		{"abc", `record: size "abc": want digits and an optional unit K, M, G or T`},
		{"1X", `record: size "1X": unknown unit "X" (want K, M, G or T)`},
		{"99999999999999999999G", `record: size "99999999999999999999G": too large`},
	}
	for _, tt := range tests {
		_, err := record.ParseSize(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseSize(%q): error %v, want %q", tt.in, err, tt.want)
		}
	}
	if _, err := record.ParseSize("8E"); !errors.Is(err, record.ErrSizeTooLarge) {
		t.Errorf("ParseSize(8E): %v, want ErrSizeTooLarge", err)
	}
}

func TestTooLargeError(t *testing.T) {
	tests := []struct {
		err  *record.TooLargeError
		want string
	}{
		{&record.TooLargeError{Size: 70000, Max: 65536}, "record of 70000 bytes exceeds the record size of 65536 bytes"},
		{&record.TooLargeError{Size: 65537, Max: 65536, AtLeast: true}, "record of at least 65537 bytes exceeds the record size of 65536 bytes"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		var err error = tt.err
		if !errors.Is(err, record.ErrTooLarge) {
			t.Errorf("errors.Is(%v, ErrTooLarge) = false", err)
		}
		var tl *record.TooLargeError
		if !errors.As(err, &tl) || tl != tt.err {
			t.Errorf("errors.As(%v) failed", err)
		}
	}
	if errors.Is(errors.New("other"), record.ErrTooLarge) {
		t.Error("an unrelated error is ErrTooLarge")
	}
}

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{1, "1"}, {1000, "1000"}, {1024, "1K"}, {1536, "1536"}, {256 << 10, "256K"},
		{4 << 20, "4M"}, {3 << 30, "3G"}, {1<<30 + 1<<20, "1025M"},
	} {
		if got := record.FormatSize(tc.n); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if n, err := record.ParseSize(tc.want); err != nil || int64(n) != tc.n {
			t.Errorf("ParseSize(%q) = %d, %v: does not read FormatSize back", tc.want, n, err)
		}
	}
}
