//go:build !race

package vecindex

// raceEnabled reports whether the race detector is on, which slows index
// builds so much that tests shrink their data.
const raceEnabled = false
