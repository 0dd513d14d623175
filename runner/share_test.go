package runner

import (
	"context"
	"strings"
	"testing"
)

// An automatic budget is shared out among a job's tasks that spill: each
// builtin runs with the share --explain names, and together they hold no
// more than the job's budget. A size given by hand is each task's.
func TestSpillingTasksShareAutoBudget(t *testing.T) {
	src := `seq 100 | tee @a @b > /dev/null; sort -r @b > @c; join "\(1\)" @a @c | tail -n 5`
	for _, set := range []int{0, 1 << 20} {
		r := New(Config{SortMemory: set})
		p, j := buildDry(t, r, src)
		if len(j.Spilling) != 3 {
			t.Fatalf("tasks that spill: %v, want sort, join, tail", j.Spilling)
		}
		want := int64(set)
		if set == 0 {
			want = max(int64(r.taskMemoryAuto())/3, 16<<20)
		}
		if j.TaskMemory != want {
			t.Errorf("--sort-memory %d: each task's budget %d, want %d", set, j.TaskMemory, want)
		}
		seen := 0
		for _, c := range p.cmds {
			if c.builtin == nil || !c.builtin.Spills {
				continue
			}
			seen++
			if int64(c.env.SortMemory) != want {
				t.Errorf("--sort-memory %d: a builtin runs with %d, want %d", set, c.env.SortMemory, want)
			}
		}
		if seen != 3 {
			t.Errorf("--sort-memory %d: %d builtins that spill, want 3", set, seen)
		}
	}
}

// A sort with -S keeps its own budget, and a sort whose output a head or
// tail cuts never spills: neither takes a share.
func TestOwnBudgetsAndCutsTakeNoShare(t *testing.T) {
	r := New(Config{})
	_, j := buildDry(t, r, `seq 10 | sort -S 10M | sort -n | tail -n 3 | head -n -1`)
	if got := strings.Join(j.Spilling, ","); got != "tail,head" {
		t.Errorf("tasks sharing the budget: %s, want tail,head", got)
	}
	if got := strings.Join(j.OwnBudgets, ","); got != "sort (10 MiB)" || j.OwnMemory != 10<<20 {
		t.Errorf("own budgets: %s (%d), want sort (10 MiB)", got, j.OwnMemory)
	}
	if want := max(int64(r.taskMemoryAuto())/2, 16<<20); j.TaskMemory != want {
		t.Errorf("each share: %d, want %d", j.TaskMemory, want)
	}
}

// buildDry compiles src and builds its job without running it; the job is
// closed when the test ends.
func buildDry(t *testing.T, r *Runner, src string) (*program, *Job) {
	t.Helper()
	p, err := r.compileSource(src)
	if err != nil {
		t.Fatal(err)
	}
	j, err := r.build(context.Background(), p, p.ast.Pipelines, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return p, j
}

func (r *Runner) taskMemoryAuto() int {
	n, _ := r.taskMemory()
	return n
}
