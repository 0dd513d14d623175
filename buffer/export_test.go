package buffer

// MaxRecordsPerBuf is the most records one buffer of p can carry.
func (p *Pool) MaxRecordsPerBuf() int { return p.nrec }
