package builtin

import (
	"context"

	"github.com/tpipe/tpipe/buffer"
	"github.com/tpipe/tpipe/task"
)

// true, : and false as tasks: in a pipeline (true | wc -l) and as the
// writer of a named edge (: > @empty), where they write nothing and end
// with status 0 or 1. On their own, outside a graph, the shell runs them
// itself (runner's shell commands). Their arguments are ignored, --help
// too: in bash they are the shell's own commands, in a pipeline as well,
// and print nothing (help true shows this help).
func init() {
	for _, c := range []struct {
		name, help string
		code       int
	}{
		{"true", "Do nothing, successfully: exit with status 0.", 0},
		{":", "Do nothing, successfully: exit with status 0 (the shell's spelling of true).", 0},
		{"false", "Do nothing, unsuccessfully: exit with status 1.", 1},
	} {
		s := &Spec{Name: c.name, Usage: c.name + " [ARGUMENT]...", Help: c.help + " The arguments are ignored.", ShellWord: true}
		code := c.code
		s.New = func(env *Env, args []string) (*Cmd, error) {
			return &Cmd{Fn: func(ctx context.Context, p *buffer.Ports) error {
				if code != 0 {
					return task.Exit(code)
				}
				return nil
			}}, nil
		}
		register(s)
	}
}
