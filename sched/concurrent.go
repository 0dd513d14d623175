package sched

import (
	"context"
	"sync"

	"github.com/tpipe/tpipe/graph"
)

// runConcurrent is the concurrent policy: one goroutine per task, all
// owned and joined here; the pool's blocking does the scheduling.
func runConcurrent(ctx context.Context, g *graph.Graph, pl Plan, o Options) (*Stats, error) {
	r, err := newRun(ctx, g, pl, o, false)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for _, i := range g.Order() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runTask(i)
		}()
	}
	wg.Wait()
	return r.finish()
}
