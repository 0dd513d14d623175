package builtin

import (
	"context"
	"strings"

	"github.com/tpipe/tpipe/buffer"
)

func init() {
	register(&Spec{
		Name:  "yes",
		Usage: "yes [STRING]...",
		Help: "Write the STRINGs, separated by spaces (default \"y\"), as a line, again and " +
			"again until the command reading them stops.",
		New: yesNew,
	})
}

func yesNew(env *Env, args []string) (*Cmd, error) {
	words, err := getopt{cmd: "yes"}.parse(args, nil)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		words = []string{"y"}
	}
	line := []byte(strings.Join(words, " ") + "\n")
	return &Cmd{Fn: func(ctx context.Context, p *buffer.Ports) error {
		out := p.Out(0)
		write := out.Write
		if strings.Count(string(line), "\n") > 1 {
			write = out.WriteText // yes $'a\nb': two lines for the next task
		}
		for {
			// Write fails with buffer.ErrReaderGone once the reader has
			// stopped (yes | head -1): the normal way for yes to end.
			if err := write(line); err != nil {
				return err
			}
		}
	}}, nil
}
