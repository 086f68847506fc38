//go:build !gomlx

package tripgnn

import "errors"

// haveGoMLX says whether this build holds the GoMLX engine.
const haveGoMLX = false

// errNoGoMLX is what the GoMLX engine returns in a build without it.
var errNoGoMLX = errors.New("tripgnn: the GoMLX engine is not in this build (build or test with -tags gomlx)")

// reference is empty: the GoMLX engine is not compiled in.
type reference struct{}

func (*reference) stale() {}

func (m *Model) gomlxPredict(*packed) ([]float32, error) { return nil, errNoGoMLX }

func (m *Model) gomlxStep(*packed) (float32, [][]float32, error) { return 0, nil, errNoGoMLX }
