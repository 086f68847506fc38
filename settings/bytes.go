package settings

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteUnits are the units ParseBytes reads, lower-cased: powers of 1024
// for KiB..TiB and K..T, of 1000 for kB..TB.
var byteUnits = map[string]float64{"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}

// ParseBytes reads a size such as "2GiB", "512MB", "1.5G" or "3000000000"
// (powers of 1024 for KiB..TiB and K..T, of 1000 for kB..TB; units ignore
// case).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 512MiB, 4GiB)", s)
	}
	mult := byteUnits[strings.ToLower(unit)]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (use KiB, MiB, GiB, TiB, or kB, MB, GB, TB)", s, unit)
	}
	if v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v * mult), nil
}
