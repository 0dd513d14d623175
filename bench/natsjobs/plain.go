package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The plain loops are what a user would write with nats.go instead of
// running tpipe serve: publish the jobs into a work-queue stream, then
// workers goroutines share one durable pull consumer, fetching batch
// messages at a time and acknowledging each. With reply set, a worker
// also publishes the message's bytes to the subject NAME.out and waits
// for the server to store them before it acknowledges the job: the same
// order as serve's (an output stored before its input is gone), without
// tpipe's marks, scratch files or pipeline.

// plainOptions are one run of a plain loop.
type plainOptions struct {
	url, stream string
	jobs        int
	job         []byte
	workers     int
	batch       int
	reply       bool
	srv         *server
	// stored is called once the jobs are stored, before the clock of
	// the consumers starts (Run syncs the disk there).
	stored func()
}

// runPlain publishes o.jobs messages of o.job (timed as s.put), then
// times the workers until every message is acknowledged, and checks that
// the stream holds what it should after: nothing, or one reply a job.
func runPlain(ctx context.Context, o plainOptions) (s sample, err error) {
	nc, err := nats.Connect(o.url)
	if err != nil {
		return s, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(256))
	if err != nil {
		return s, err
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:      o.stream,
		Subjects:  []string{o.stream + ".>"},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   jetstream.FileStorage,
	})
	if err != nil {
		return s, fmt.Errorf("create stream: %w", err)
	}
	in, out := o.stream+".in", o.stream+".out"
	t0 := time.Now()
	for range o.jobs {
		if _, err := js.PublishAsync(in, o.job); err != nil {
			return s, fmt.Errorf("publish: %w", err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return s, ctx.Err()
	}
	s.put = time.Since(t0)
	// A publish that failed leaves fewer messages than jobs.
	if err := waitMsgs(ctx, st, uint64(o.jobs), "stored"); err != nil {
		return s, err
	}
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       "work",
		FilterSubject: in,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       time.Minute,
		MaxAckPending: -1,
	})
	if err != nil {
		return s, fmt.Errorf("create consumer: %w", err)
	}
	if o.stored != nil {
		o.stored()
	}

	var (
		done     atomic.Int64
		end      = make(chan time.Time, 1)
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	failed := func() bool { mu.Lock(); defer mu.Unlock(); return firstErr != nil }
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ru0, srv0 := selfCPU(), o.srv.cpu()
	t0 = time.Now()
	for range o.workers {
		wg.Go(func() {
			for done.Load() < int64(o.jobs) && wctx.Err() == nil && !failed() {
				b, err := cons.Fetch(o.batch, jetstream.FetchMaxWait(time.Second))
				if err != nil {
					fail(fmt.Errorf("fetch: %w", err))
					return
				}
				for m := range b.Messages() {
					if o.reply {
						if _, err := js.Publish(wctx, out, m.Data()); err != nil {
							fail(fmt.Errorf("publish reply: %w", err))
							return
						}
					}
					if err := m.Ack(); err != nil {
						fail(fmt.Errorf("ack: %w", err))
						return
					}
					if done.Add(1) == int64(o.jobs) {
						// Every ack is sent; the flush's round trip
						// says the server has read them.
						if err := nc.Flush(); err != nil {
							fail(fmt.Errorf("flush: %w", err))
						}
						end <- time.Now()
					}
				}
				if err := b.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
					fail(fmt.Errorf("fetch: %w", err))
					return
				}
			}
		})
	}
	var t1 time.Time
	select {
	case t1 = <-end:
	case <-ctx.Done():
	}
	s.wall = t1.Sub(t0)
	s.cpu, s.srvCPU = selfCPU()-ru0, o.srv.cpu()-srv0
	cancel()
	wg.Wait()
	if firstErr != nil {
		return s, firstErr
	}
	if err := ctx.Err(); err != nil {
		return s, err
	}
	if n := done.Load(); n != int64(o.jobs) {
		return s, fmt.Errorf("%d jobs acknowledged, want %d", n, o.jobs)
	}
	// Under work-queue retention an acknowledged message is removed:
	// what is left are the replies.
	left := uint64(0)
	if o.reply {
		left = uint64(o.jobs)
	}
	return s, waitMsgs(ctx, st, left, "left")
}

// waitMsgs waits (up to 10s: the server applies acks on its own time)
// until the stream holds want messages.
func waitMsgs(ctx context.Context, st jetstream.Stream, want uint64, what string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := st.Info(ctx)
		if err != nil {
			return fmt.Errorf("stream info: %w", err)
		}
		if info.State.Msgs == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d messages %s in the stream, want %d", info.State.Msgs, what, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
