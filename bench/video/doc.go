// Package video is the video half of tpipe's benchmark suite: it makes
// shaky clips of its own (a generated still picture seen by a camera on a
// known path that shakes, with sensor noise), runs tpipe's stabilize,
// ffmpeg's deshake filter and vid.stab's two passes on them as separate
// processes measured from outside (wall time, CPU time, peak RSS), and
// measures what shake each leaves with an independent meter (package
// video/shake: phase correlation of consecutive output frames). Run it
// with `go run ./bench -video` or `tpipe bench -video`; bench/README.md
// says what the report holds.
package video
