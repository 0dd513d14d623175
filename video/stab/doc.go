// Package stab removes camera shake from a sequence of video frames.
//
// The work is done in four steps, each usable on its own:
//
//   - Estimate measures the global motion between two consecutive frames
//     as a Similarity (shift, rotation and scale about the frame's centre).
//     It matches small textured blocks coarse to fine on a luma pyramid,
//     refines each match to a fraction of a pixel, and fits the model to
//     the matches with RANSAC, so that a moving object or noise in a few
//     blocks does not move the estimate.
//   - The motions, composed, are the camera's path; Smooth averages that
//     path with a Gaussian over a bounded window of frames.
//   - The difference between the path and its smoothed version is the
//     correction. It is limited (shift, angle) and, unless borders are
//     asked for, the picture is zoomed just enough that the corrected frame
//     never shows the edge of the source.
//   - Warp resamples every plane of a frame under that transform
//     (bilinear, chroma planes at their own resolution).
//
// A Stabilizer strings the steps together over a stream: it takes frames
// and gives them back, corrected, Window frames later. Either the caller
// keeps the Window+1 frames that are in flight (Track, Correct), or the
// Stabilizer does, in memory allocated once (Push, Flush).
//
// Frames are 8-bit planar pictures described by a Layout: a luma plane
// (Y) and, unless the layout is monochrome, two chroma planes (U, V),
// subsampled as the layout says, stored back to back in one byte slice as
// in a YUV4MPEG2 frame.
package stab
