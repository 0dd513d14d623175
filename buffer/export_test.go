package buffer

// In test mode a pool returns ErrWouldBlock where it would park a task, so
// a model-based test can drive every port from one goroutine.
var ErrWouldBlock = errWouldBlock

func (p *Pool) SetNoBlock() { p.noBlock = true }

func (p *Pool) MaxRecordsPerBuf() int { return cap(p.bufs[0].ends) }
