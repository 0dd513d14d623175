package progress

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNumbers(t *testing.T) {
	counts := []struct {
		x    float64
		want string
	}{{0, "0"}, {999, "999"}, {999.6, "1.0k"}, {12345, "12.3k"}, {99960, "100k"}, {999400, "999k"}, {999600, "1.00M"}, {1234567, "1.23M"}, {2.5e9, "2.50G"}}
	for _, c := range counts {
		if got := count(c.x); got != c.want {
			t.Errorf("count(%v) = %q, want %q", c.x, got, c.want)
		}
	}
	sizes := []struct {
		x    float64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1.5 * (1 << 20), "1.5 MiB"}, {3 << 40, "3.0 TiB"}, {5 << 50, "5120.0 TiB"}}
	for _, c := range sizes {
		if got := size(c.x); got != c.want {
			t.Errorf("size(%v) = %q, want %q", c.x, got, c.want)
		}
	}
	durations := []struct {
		d    time.Duration
		want string
	}{{0, "0s"}, {1499 * time.Millisecond, "1s"}, {59 * time.Second, "59s"}, {185 * time.Second, "3m05s"}, {3720 * time.Second, "1h02m"}}
	for _, c := range durations {
		if got := duration(c.d); got != c.want {
			t.Errorf("duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestRowStats(t *testing.T) {
	tests := []struct {
		r    Row
		want string
	}{
		{Row{Records: 1234567, Bytes: 45.6 * (1 << 20), Busy: 0.874}, " 1.23M rec/s  45.6 MiB/s  busy  87%"},
		{Row{Records: 12, Bytes: 100, Busy: 1, Bottleneck: true}, "    12 rec/s     100 B/s  busy 100%  <- bottleneck"},
		{Row{Records: 5, Done: true}, "done"},
	}
	for _, tt := range tests {
		if got := rowStats(tt.r); got != tt.want {
			t.Errorf("rowStats(%+v)\n got %q\nwant %q", tt.r, got, tt.want)
		}
	}
}

func TestTotalText(t *testing.T) {
	el := 31 * time.Second
	tests := []struct {
		name string
		t    Total
		want string
	}{
		{"bytes of a known size", Total{Unit: "bytes", Done: 412 << 20, Of: 1100 << 20, Rate: 12 << 20}, "37%  412.0 MiB of 1.1 GiB  12.0 MiB/s  ETA 57s  elapsed 31s"},
		{"bytes of an unknown size", Total{Unit: "bytes", Done: 2048, Rate: 66}, "2.0 KiB read  66 B/s  elapsed 31s"},
		{"frames", Total{Unit: "frames", Done: 120, Of: 450, Rate: 31.2}, "frame 120 of 450 (27%)  31.2 frames/s  ETA 11s  elapsed 31s"},
		{"no rate yet: no ETA", Total{Unit: "frames", Of: 450}, "frame 0 of 450 (0%)  0.0 frames/s  elapsed 31s"},
		{"nothing known", Total{}, "elapsed 31s"},
	}
	for _, tt := range tests {
		if got := totalText(tt.t, el); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestPlainLine(t *testing.T) {
	f := Frame{Elapsed: 3 * time.Second, Rows: []Row{
		{Name: "<in", Records: 2000, Bytes: 64 << 10, Busy: 0.2},
		{Name: "grep", Records: 2000, Bytes: 64 << 10, Busy: 0.95, Fill: 3, Cap: 4, Bottleneck: true},
		{Name: "wc", Done: true},
	}, Total: Total{Unit: "bytes", Done: 1 << 20, Of: 4 << 20, Rate: 1 << 20}}
	want := "tpipe: 3s: <in 2.0k rec/s 64.0 KiB/s busy 20%; grep 2.0k rec/s 64.0 KiB/s busy 95% queue 3/4; wc done; bottleneck grep; 25%  1.0 MiB of 4.0 MiB  1.0 MiB/s  ETA 3s"
	if got := plainLine(f); got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}
