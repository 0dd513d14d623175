package ext_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/tpipe/tpipe/ext"
	"github.com/tpipe/tpipe/task"
)

func TestProcessPipes(t *testing.T) {
	p, err := ext.Start(context.Background(), ext.Options{Args: []string{"sh", "-c", "tr a-z A-Z; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(p.Stdin, "hello\n"); err != nil {
		t.Fatal(err)
	}
	p.Stdin.Close()
	out, err := io.ReadAll(p.Stdout)
	if err != nil || string(out) != "HELLO\n" {
		t.Errorf("read %q, %v", out, err)
	}
	var ee *task.ExitError
	if err := p.Wait(false); !errors.As(err, &ee) || ee.Code != 3 {
		t.Errorf("Wait: %v, want status 3", err)
	}
}

func TestProcessCancel(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	p, err := ext.Start(ctx, ext.Options{Args: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stopped")
	start := time.Now()
	cancel(stop)
	if _, err := p.Stdout.Read(make([]byte, 1)); err == nil {
		t.Errorf("a read after cancel succeeded")
	}
	if err := p.Wait(false); !errors.Is(err, stop) {
		t.Errorf("Wait: %v, want the cause", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestProcessKill(t *testing.T) {
	p, err := ext.Start(context.Background(), ext.Options{Args: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(true); err != nil {
		t.Errorf("Wait(kill): %v", err)
	}
}

func TestProcessNotFound(t *testing.T) {
	_, err := ext.Start(context.Background(), ext.Options{Args: []string{"no-such-program-tpipe"}})
	var ee *task.ExitError
	if !errors.As(err, &ee) || ee.Code != ext.StatusNotFound {
		t.Errorf("Start: %v, want status 127", err)
	}
}
