package suite

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/tpipe/tpipe/bench/jobs"
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
	tpipe := fs.String("tpipe", "", "with -video or -jobs, the tpipe binary to run (default: go build ./cmd/tpipe of the current module)")
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: bench [-quick] [-out DIR] [-runs N]\n       bench -video [-quick] [-out DIR] [-runs N] [-tpipe PATH]\n       bench -jobs [-quick] [-out DIR] [-runs N] [-tpipe PATH]")
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
	if *jobsBench {
		return jobsMain(ctx, fs, *quick, *out, *runs, *tpipe, stdout, stderr)
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

// videoMain is `bench -video`: the video benchmark of package bench/video,
// writing video.md into out. Without ffmpeg it says why it skips and
// succeeds: the comparison has nothing to compare with.
func videoMain(ctx context.Context, fs *flag.FlagSet, quick bool, out string, runs int, tpipe string, stdout, stderr io.Writer) int {
	cfg := video.FullConfig()
	if quick {
		cfg = video.QuickConfig()
	}
	return sideMain(fs, "-video", &cfg.Runs, runs, video.MinRuns, video.ErrNoFFmpeg, stderr, func() error {
		cfg.Tpipe, cfg.Progress = tpipe, stderr
		return video.Run(ctx, cfg, out, stdout)
	})
}

// jobsMain is `bench -jobs`: the job engine's benchmark of package
// bench/jobs, writing jobs.md into out. Without GNU parallel it says why
// it skips and succeeds, as -video does without ffmpeg.
func jobsMain(ctx context.Context, fs *flag.FlagSet, quick bool, out string, runs int, tpipe string, stdout, stderr io.Writer) int {
	cfg := jobs.FullConfig()
	if quick {
		cfg = jobs.QuickConfig()
	}
	return sideMain(fs, "-jobs", &cfg.Runs, runs, jobs.MinRuns, jobs.ErrNoParallel, stderr, func() error {
		cfg.Tpipe, cfg.Progress = tpipe, stderr
		return jobs.Run(ctx, cfg, out, stdout)
	})
}

// sideMain is what -video and -jobs (name) share: -runs, when given, sets
// *cfgRuns (at least minRuns); run runs the benchmark; the error missing
// (the tool compared with is not installed) is a skip, said, with status 0.
func sideMain(fs *flag.FlagSet, name string, cfgRuns *int, runs, minRuns int, missing error, stderr io.Writer, run func() error) int {
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "runs" {
			*cfgRuns = runs
		}
	})
	switch {
	case *cfgRuns < minRuns:
		fmt.Fprintf(stderr, "bench: -runs %d: at least %d runs per cell\n", *cfgRuns, minRuns)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	err := run()
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
