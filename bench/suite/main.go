package suite

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tpipe/tpipe/bench/corpus"
	"github.com/tpipe/tpipe/bench/jobs"
	"github.com/tpipe/tpipe/bench/natsjobs"
	"github.com/tpipe/tpipe/bench/video"
)

// Main is the whole benchmark command, shared by `go run ./bench` and
// `tpipe bench`: it parses args, runs the matrix, writes the report and
// prints the paths of the files it wrote on stdout. The status is 0 on
// success, 2 on a usage error (said on stderr with the flags) and 1 when
// the run fails. -h prints the flags on stdout.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	quick := fs.Bool("quick", false, "small inputs and fewer B points (under a minute on 2 cores)")
	out := fs.String("out", "bench/out", "directory for report.md, results.csv and the plots")
	runs := fs.Int("runs", 5, "runs per cell (at least 5; with -video at least 3); the median is reported with min and max")
	vid := fs.Bool("video", false, "benchmark video stabilization instead: tpipe's stabilize against ffmpeg's deshake and vid.stab (needs ffmpeg)")
	jobsBench := fs.Bool("jobs", false, "benchmark the job engine instead: tpipe pmjq against GNU parallel and a bash loop on folders of jobs (needs parallel)")
	natsBench := fs.Bool("nats", false, "benchmark tpipe serve on NATS JetStream instead: against serve on a folder and a plain nats.go fetch-and-ack loop (builds nats-server, or $TPIPE_NATS_SERVER)")
	tinyOnly := fs.Bool("tiny", false, "with -jobs, only the tiny jobs: the job engine's cost per job, against the bash loop and GNU parallel")
	corp := fs.Bool("corpus", false, "benchmark everyday pipelines instead: tpipe against bash + GNU coreutils on a generated access log and word lists")
	tpipe := fs.String("tpipe", "", "with -video, -jobs, -nats or -corpus, the tpipe binary to run (default: go build ./cmd/tpipe of the current module)")
	base := fs.String("base", "", "with -jobs or -corpus, a second tpipe binary (an older build) run in the same rounds, for a before-and-after table")
	spooled := fs.Bool("spool", false, "benchmark the spool instead: --spool against in-memory runs by segment size, fsync on and off, on tmpfs and disk")
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: bench [-quick] [-out DIR] [-runs N]\n       bench -video [-quick] [-out DIR] [-runs N] [-tpipe PATH]\n       bench -jobs [-quick] [-tiny] [-out DIR] [-runs N] [-tpipe PATH] [-base PATH]\n       bench -nats [-quick] [-out DIR] [-runs N] [-tpipe PATH]\n       bench -corpus [-quick] [-out DIR] [-runs N] [-tpipe PATH] [-base PATH]\n       bench -spool [-quick] [-out DIR] [-runs N]")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "bench: %v\n", err)
		usage(stderr)
		return 2
	}
	if *vid {
		return videoMain(ctx, fs, *quick, *out, *runs, *tpipe, stdout, stderr)
	}
	if *tinyOnly && !*jobsBench {
		fmt.Fprintf(stderr, "bench: -tiny goes with -jobs\n")
		usage(stderr)
		return 2
	}
	if *jobsBench {
		return jobsMain(ctx, fs, *quick, *tinyOnly, *out, *runs, *tpipe, *base, stdout, stderr)
	}
	if *natsBench {
		return natsMain(ctx, fs, *quick, *out, *runs, *tpipe, stdout, stderr)
	}
	if *corp {
		return corpusMain(ctx, fs, *quick, *out, *runs, *tpipe, *base, stdout, stderr)
	}
	if *spooled {
		cfg := spoolFullConfig()
		if *quick {
			cfg = spoolQuickConfig()
		}
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "runs" {
				cfg.runs = *runs
			}
		})
		if cfg.runs < 3 || fs.NArg() > 0 {
			fmt.Fprintf(stderr, "bench: -spool takes -quick, -out and -runs N (at least 3)\n")
			return 2
		}
		cfg.progress = stderr
		if err := spoolMain(ctx, cfg, *out, stdout); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		return 0
	}
	switch {
	case *runs < 5:
		fmt.Fprintf(stderr, "bench: -runs %d: at least 5 runs per cell\n", *runs)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "bench: unexpected argument %q\n", fs.Arg(0))
		usage(stderr)
		return 2
	}
	cfg := fullConfig()
	if *quick {
		cfg = quickConfig()
	}
	cfg.runs = *runs
	cfg.progress = stderr
	if err := run(ctx, cfg, *out, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// run runs the matrix of cfg and writes the report into dir.
func run(ctx context.Context, cfg config, dir string, stdout io.Writer) error {
	res, err := runMatrix(ctx, cfg)
	if err != nil {
		return err
	}
	files, err := writeReport(dir, cfg, res)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return nil
}

// subRuns is the runs per cell of a benchmark with its own default
// (def) and minimum: -runs if given, else def. It checks the rest of the
// command line too, and says what is wrong on stderr (ok false: a usage
// error).
func subRuns(fs *flag.FlagSet, def, given, least int, stderr io.Writer) (runs int, ok bool) {
	runs = def
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "runs" {
			runs = given
		}
	})
	switch {
	case runs < least:
		fmt.Fprintf(stderr, "bench: -runs %d: at least %d runs per cell\n", runs, least)
		return runs, false
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "bench: unexpected argument %q\n", fs.Arg(0))
		return runs, false
	}
	return runs, true
}

// videoMain is `bench -video`: the video benchmark of package bench/video,
// writing video.md into out. Without ffmpeg it says why it skips and
// succeeds: the comparison has nothing to compare with.
func videoMain(ctx context.Context, fs *flag.FlagSet, quick bool, out string, runs int, tpipe string, stdout, stderr io.Writer) int {
	cfg := video.FullConfig()
	if quick {
		cfg = video.QuickConfig()
	}
	var ok bool
	if cfg.Runs, ok = subRuns(fs, cfg.Runs, runs, video.MinRuns, stderr); !ok {
		return 2
	}
	cfg.Tpipe, cfg.Progress = tpipe, stderr
	return sideStatus("-video", video.Run(ctx, cfg, out, stdout), video.ErrNoFFmpeg, stderr)
}

// jobsMain is `bench -jobs`: the job engine's benchmark of package
// bench/jobs, writing jobs.md into out; with -tiny (tinyOnly) only its
// tiny jobs. Without GNU parallel it says why it skips and succeeds, as
// -video does without ffmpeg.
func jobsMain(ctx context.Context, fs *flag.FlagSet, quick, tinyOnly bool, out string, runs int, tpipe, base string, stdout, stderr io.Writer) int {
	cfg := jobs.FullConfig()
	if quick {
		cfg = jobs.QuickConfig()
	}
	cfg.TinyOnly = tinyOnly
	var ok bool
	if cfg.Runs, ok = subRuns(fs, cfg.Runs, runs, jobs.MinRuns, stderr); !ok {
		return 2
	}
	cfg.Tpipe, cfg.Base, cfg.Progress = tpipe, base, stderr
	return sideStatus("-jobs", jobs.Run(ctx, cfg, out, stdout), jobs.ErrNoParallel, stderr)
}

// natsMain is `bench -nats`: the NATS backend's benchmark of package
// bench/natsjobs, writing nats.md into out.
func natsMain(ctx context.Context, fs *flag.FlagSet, quick bool, out string, runs int, tpipe string, stdout, stderr io.Writer) int {
	cfg := natsjobs.FullConfig()
	if quick {
		cfg = natsjobs.QuickConfig()
	}
	var ok bool
	if cfg.Runs, ok = subRuns(fs, cfg.Runs, runs, natsjobs.MinRuns, stderr); !ok {
		return 2
	}
	cfg.Tpipe, cfg.Progress = tpipe, stderr
	if err := natsjobs.Run(ctx, cfg, out, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// sideStatus is the status of a benchmark beside other tools (name) that
// ended with err: missing (the tool compared with is not installed) is a
// skip, said, with status 0.
func sideStatus(name string, err, missing error, stderr io.Writer) int {
	if errors.Is(err, missing) {
		fmt.Fprintf(stderr, "bench: %s skipped: %v\n", name, err)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// corpusMain is `bench -corpus`: the pipeline corpus of package
// bench/corpus, writing corpus.md, corpus.csv and corpus.svg into out.
func corpusMain(ctx context.Context, fs *flag.FlagSet, quick bool, out string, runs int, tpipe, base string, stdout, stderr io.Writer) int {
	cfg := corpus.FullConfig()
	if quick {
		cfg = corpus.QuickConfig()
	}
	var ok bool
	if cfg.Runs, ok = subRuns(fs, cfg.Runs, runs, corpus.MinRuns, stderr); !ok {
		return 2
	}
	cfg.Tpipe, cfg.Base = tpipe, base
	cfg.Progress = stderr
	if err := corpus.Run(ctx, cfg, out, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}
