package kg

// Dir is the direction of an edge seen from one of its ends: Outgoing
// from its head, Incoming to its tail. It is what a walk over the KG
// passes where it would otherwise pass an `out bool`.
type Dir uint8

const (
	// Outgoing is an edge seen from its head (Reader.Out).
	Outgoing Dir = iota
	// Incoming is an edge seen from its tail (Reader.In).
	Incoming
)

// String names the direction.
func (d Dir) String() string {
	if d == Incoming {
		return "in"
	}
	return "out"
}

// Reverse returns the other direction.
func (d Dir) Reverse() Dir { return 1 - d }

// Far returns the end of t across from the one it is seen from in
// direction d: the tail of an Outgoing edge, the head of an Incoming one.
func (t Triple) Far(d Dir) int32 {
	if d == Incoming {
		return t.Head
	}
	return t.Tail
}

// Edges returns e's edges in direction d: r.Out(e) or r.In(e).
func Edges(r Reader, e int32, d Dir) []int32 {
	if d == Incoming {
		return r.In(e)
	}
	return r.Out(e)
}
