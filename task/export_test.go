package task

// SetOnReplicate makes f see every replicated task turn to its workers,
// until restore; call both while no task runs.
func SetOnReplicate(f func(n int)) (restore func()) {
	old := onReplicate
	onReplicate = f
	return func() { onReplicate = old }
}
