package runner

import "testing"

func TestRoundRecordSize(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{1, 1},
		{1280*720*3/2 + 256, 3 << 19},  // 1.5 MiB
		{1920*1080*3/2 + 256, 3 << 20}, // 3 MiB
		{3840*2160*3/2 + 256, 3 << 22}, // 12 MiB
		{1 << 20, 1 << 20},             // a power of two stays
		{1<<20 + 1, 5 << 18},           // 1.25 MiB
		{7 << 18, 7 << 18},             // 1.75 MiB
		{256<<10 + 1, 320 << 10},
	} {
		if got := roundRecordSize(tc.n); got != tc.want || got < tc.n {
			t.Errorf("roundRecordSize(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestHuman(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {3 << 19, "1.5 MiB"}, {256 << 10, "256 KiB"}, {5 << 18, "1.25 MiB"}, {12 << 20, "12 MiB"}} {
		if got := human(tc.n); got != tc.want {
			t.Errorf("human(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
