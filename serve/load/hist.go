package load

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// Latencies are kept in a log-linear histogram rather than as a list: its
// size is fixed whatever the run's length, a worker records into its own
// without locks, and the reporter reads an interval as the difference of
// two snapshots. Each power of two is cut into subBuckets buckets, so a
// percentile is off by at most 1/subBuckets (1.6%).
const (
	subBits    = 6
	subBuckets = 1 << subBits
	// maxExp covers 2^(maxExp+subBits) ns, over 10 days: no latency is
	// clipped in practice, and one that were would land in the last
	// bucket rather than be lost.
	maxExp   = 44
	nBuckets = subBuckets + maxExp*subBuckets
)

// bucketOf returns the bucket of a latency of ns nanoseconds.
func bucketOf(ns int64) int {
	if ns < subBuckets {
		if ns < 0 {
			return 0
		}
		return int(ns)
	}
	exp := bits.Len64(uint64(ns)) - subBits - 1
	if exp >= maxExp {
		return nBuckets - 1
	}
	return subBuckets + exp*subBuckets + int(uint64(ns)>>exp) - subBuckets
}

// bucketValue returns the middle of bucket b, in nanoseconds.
func bucketValue(b int) int64 {
	if b < subBuckets {
		return int64(b)
	}
	exp := (b - subBuckets) / subBuckets
	lo := int64(subBuckets+(b-subBuckets)%subBuckets) << exp
	return lo + (int64(1)<<exp)/2
}

// hist is one worker's latency histogram: the worker adds, the reporter
// reads concurrently.
type hist struct {
	counts [nBuckets]atomic.Uint64
}

func (h *hist) add(d time.Duration) { h.counts[bucketOf(int64(d))].Add(1) }

// counts is a snapshot of (or a sum over) histograms.
type counts [nBuckets]uint64

// addFrom adds h's current counts to c.
func (c *counts) addFrom(h *hist) {
	for i := range c {
		c[i] += h.counts[i].Load()
	}
}

// minus returns c - prev: the latencies recorded since prev was taken.
func (c *counts) minus(prev *counts) *counts {
	out := new(counts)
	for i := range c {
		out[i] = c[i] - prev[i]
	}
	return out
}

// total is the number of latencies counted.
func (c *counts) total() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// quantile returns the q-quantile (0 < q <= 1) of the counted latencies,
// 0 when none were.
func (c *counts) quantile(q float64) time.Duration {
	n := c.total()
	if n == 0 {
		return 0
	}
	// The rank of the q-quantile, 1-based: p50 of 2 values is the first.
	rank := max(1, min(uint64(math.Ceil(q*float64(n))), n))
	var seen uint64
	for i, v := range c {
		if seen += v; seen >= rank {
			return time.Duration(bucketValue(i))
		}
	}
	return time.Duration(bucketValue(nBuckets - 1))
}
