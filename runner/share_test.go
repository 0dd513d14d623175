package runner

import (
	"context"
	"testing"
)

// An automatic budget is shared out among a job's tasks that spill: each
// builtin runs with the share --explain names, and together they hold no
// more than the job's budget. A size given by hand is each task's.
func TestSpillingTasksShareAutoBudget(t *testing.T) {
	src := `seq 100 | tee @a @b > /dev/null; sort -r @b > @c; join "\(1\)" @a @c | tail -n 5`
	for _, set := range []int{0, 1 << 20} {
		r := New(Config{SortMemory: set})
		p, err := r.compileSource(src)
		if err != nil {
			t.Fatal(err)
		}
		j, err := r.build(context.Background(), p, p.ast.Pipelines, true)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
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

func (r *Runner) taskMemoryAuto() int {
	n, _ := r.taskMemory()
	return n
}
