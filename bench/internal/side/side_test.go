package side

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRoundsRunsEveryCellOncePerRound(t *testing.T) {
	const runs, n = 5, 7
	var order []int
	var progress strings.Builder
	err := Rounds(context.Background(), runs, n, &progress, func(i int) error {
		order = append(order, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != runs*n {
		t.Fatalf("%d calls, want %d", len(order), runs*n)
	}
	for r := range runs {
		seen := make([]bool, n)
		for _, i := range order[r*n : (r+1)*n] {
			if seen[i] {
				t.Fatalf("round %d ran cell %d twice: %v", r+1, i, order)
			}
			seen[i] = true
		}
	}
	if got := strings.Count(progress.String(), "\n"); got != runs {
		t.Errorf("progress has %d lines, want one a round:\n%s", got, progress.String())
	}
}

func TestRoundsStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	err := Rounds(context.Background(), 3, 4, nil, func(int) error {
		calls++
		if calls == 6 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls != 6 {
		t.Fatalf("err %v after %d calls, want boom after 6", err, calls)
	}
}

func TestRoundsStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Rounds(ctx, 3, 4, nil, func(int) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Fatalf("err %v after %d calls, want context.Canceled after 2", err, calls)
	}
}
