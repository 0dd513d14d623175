package main

// killAfterCommits returns the hook the runner calls after each token
// committed under the spool policy (runner.Runner.AfterCommit): none in
// tpipe as shipped. The crash tests set it (crashhook_test.go) to kill the
// process at every point of the commit protocol.
var killAfterCommits = func() func() { return nil }
