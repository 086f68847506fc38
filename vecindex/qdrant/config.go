package qdrant

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultPort is Qdrant's gRPC port; the REST port 6333 is not used here
// because gRPC carries float32 vectors packed, about a third the size of
// JSON text for an upload.
const DefaultPort = 6334

// Defaults for the Config fields left zero.
const (
	// DefaultTimeout bounds one gRPC call (one attempt). An upsert of 1,000
	// points of 1,024 dimensions with Wait is a few MB and takes well under
	// a second on a local server, so 30 s only trips on a stuck server.
	DefaultTimeout = 30 * time.Second
	// DefaultBatchSize is how many points go in one upsert: the batch size
	// Qdrant's documentation uses for bulk uploads. Each batch is one
	// round trip, so smaller batches cost latency; at dimension 384 one
	// batch is about 1.5 MB, comfortably within gRPC message limits.
	DefaultBatchSize = 1000
	// DefaultMaxRetries is how many times a call that failed transiently is
	// repeated: with DefaultBackoff the waits are 0.2+0.4+0.8+1.6 s, enough to
	// ride out a server restart without hiding a server that is down.
	DefaultMaxRetries = 4
	// DefaultBackoff is the wait before the first retry; it doubles for each
	// further retry up to MaxBackoff.
	DefaultBackoff = 200 * time.Millisecond
	// MaxBackoff caps one wait between retries.
	MaxBackoff = 5 * time.Second
	// maxTimeout bounds the timeout a URL may ask for, so a typo such as
	// timeout=5000h cannot make stem hang for months.
	maxTimeout = time.Hour
	// maxBatchSize bounds batch=, since one batch is one gRPC message and
	// 65,536 points of even 64 dimensions already make 16 MB.
	maxBatchSize = 1 << 16
)

// Config says where the Qdrant server is and how to talk to it. ParseURL
// fills it from a --vector-store URL; zero fields take the defaults above.
type Config struct {
	// Host is the server's host name or IP address (IPv6 without brackets).
	Host string
	// Port is the server's gRPC port; 0 means DefaultPort.
	Port int
	// APIKeyEnv names the environment variable Open reads the API key from.
	// The key itself never appears in a URL, so it cannot leak into shell
	// history, logs or run reports that print the flag.
	APIKeyEnv string
	// APIKey is the key itself, for callers that have it in hand; it wins
	// over APIKeyEnv and is never printed by String.
	APIKey string
	// TLS encrypts the connection; required for Qdrant Cloud, and for any
	// API key sent over a network that is not trusted.
	TLS bool
	// Collection, when set, is used instead of CollectionName's derived name
	// (for example to share one prepared collection between machines).
	Collection string
	// Timeout bounds each gRPC call attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// Approximate lets Qdrant answer from its HNSW graph instead of scanning
	// every vector. Faster on millions of points, but results may then miss
	// true neighbours and so differ from vecindex.Flat's; off by default.
	Approximate bool
	// BatchSize is how many points go in one upsert; 0 means
	// DefaultBatchSize.
	BatchSize int
	// MaxRetries bounds the retries of a transiently failed call; 0 means
	// DefaultMaxRetries and a negative value means no retry.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled for each further
	// one (no jitter, so behaviour is reproducible); 0 means DefaultBackoff.
	Backoff time.Duration
}

// withDefaults returns c with zero fields replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	return c
}

// Addr is the host:port the client dials.
func (c Config) Addr() string {
	port := c.Port
	if port == 0 {
		port = DefaultPort
	}
	return net.JoinHostPort(c.Host, strconv.Itoa(port))
}

// String renders c as a qdrant:// URL that ParseURL reads back to the same
// Config (APIKey excepted: it is never printed).
func (c Config) String() string {
	u := url.URL{Scheme: "qdrant", Host: c.Addr()}
	q := url.Values{}
	if c.APIKeyEnv != "" {
		q.Set("api-key-env", c.APIKeyEnv)
	}
	if c.TLS {
		q.Set("tls", "1")
	}
	if c.Collection != "" {
		q.Set("collection", c.Collection)
	}
	if c.Timeout != 0 {
		q.Set("timeout", c.Timeout.String())
	}
	if c.Approximate {
		q.Set("approximate", "1")
	}
	if c.BatchSize != 0 {
		q.Set("batch", strconv.Itoa(c.BatchSize))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// ParseURL reads a --vector-store value of the form
//
//	qdrant://HOST[:PORT][?param=value&...]
//
// PORT is the gRPC port (default 6334). Parameters, each at most once:
//
//	api-key-env=VAR   read the API key from environment variable VAR
//	tls=1|0           use TLS (also true/false)
//	collection=NAME   use this collection instead of the derived name
//	timeout=DUR       per-call timeout, a Go duration such as 5s (max 1h)
//	approximate=1|0   allow HNSW (approximate) search instead of exact
//	batch=N           points per upsert, 1..65536
//
// Anything else (another scheme, a path, user info, an api-key parameter,
// unknown parameters) is an error that says what to write instead.
func ParseURL(s string) (Config, error) {
	var c Config
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the whole input, which may hold a password
		// someone put in by mistake; report only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return c, fmt.Errorf("qdrant url: cannot parse (want qdrant://HOST:PORT): %w", err)
	}
	if u.Scheme != "qdrant" {
		return c, fmt.Errorf("qdrant url %q: scheme must be qdrant://HOST:PORT", s)
	}
	if u.Opaque != "" {
		return c, fmt.Errorf("qdrant url %q: want qdrant://HOST:PORT (with the two slashes)", s)
	}
	if u.User != nil {
		return c, fmt.Errorf("qdrant url: credentials do not belong in the URL; put the API key in an environment variable and add ?api-key-env=VAR")
	}
	if u.Path != "" && u.Path != "/" {
		return c, fmt.Errorf("qdrant url %q: unexpected path %q; name a collection with ?collection=NAME", s, u.Path)
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return c, fmt.Errorf("qdrant url %q: unexpected fragment", s)
	}
	c.Host = u.Hostname()
	if c.Host == "" {
		return c, fmt.Errorf("qdrant url %q: missing host, want qdrant://HOST:PORT", s)
	}
	if err := checkHost(c.Host, strings.HasPrefix(u.Host, "[")); err != nil {
		return c, fmt.Errorf("qdrant url %q: %w", s, err)
	}
	c.Port = DefaultPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return c, fmt.Errorf("qdrant url %q: port %q is not in 1..65535", s, p)
		}
		c.Port = n
	} else if strings.HasSuffix(u.Host, ":") {
		return c, fmt.Errorf("qdrant url %q: empty port", s)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return c, fmt.Errorf("qdrant url %q: query: %w", s, err)
	}
	for key, vals := range q {
		if len(vals) != 1 {
			return c, fmt.Errorf("qdrant url %q: parameter %s given %d times", s, key, len(vals))
		}
		v := vals[0]
		switch key {
		case "api-key-env":
			if !validEnvName(v) {
				return c, fmt.Errorf("qdrant url %q: api-key-env=%q is not an environment variable name (letters, digits, _)", s, v)
			}
			c.APIKeyEnv = v
		case "tls":
			if c.TLS, err = parseBool(v); err != nil {
				return c, fmt.Errorf("qdrant url %q: tls: %w", s, err)
			}
		case "approximate":
			if c.Approximate, err = parseBool(v); err != nil {
				return c, fmt.Errorf("qdrant url %q: approximate: %w", s, err)
			}
		case "collection":
			if err := checkCollectionName(v); err != nil {
				return c, fmt.Errorf("qdrant url %q: %w", s, err)
			}
			c.Collection = v
		case "timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > maxTimeout {
				return c, fmt.Errorf("qdrant url %q: timeout=%q, want a duration in (0, %v] such as 5s", s, v, maxTimeout)
			}
			c.Timeout = d
		case "batch":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxBatchSize {
				return c, fmt.Errorf("qdrant url %q: batch=%q, want a whole number in 1..%d", s, v, maxBatchSize)
			}
			c.BatchSize = n
		case "api-key", "apikey", "api_key", "key":
			return c, fmt.Errorf("qdrant url: the API key must not be in the URL; export it and use ?api-key-env=VAR")
		default:
			return c, fmt.Errorf("qdrant url %q: unknown parameter %q (known: api-key-env, tls, collection, timeout, approximate, batch)", s, key)
		}
	}
	return c, nil
}

// checkHost accepts a DNS name or an IP address: net/url lets through hosts
// such as "::1" without brackets (read as host ":" and port 1), which would
// dial somewhere unintended. IPv6 needs brackets, so a ':' is only allowed
// when the host was bracketed; zones (%eth0) are not supported.
func checkHost(h string, bracketed bool) error {
	for i := 0; i < len(h); i++ {
		b := h[i]
		switch {
		case b == '.' || b == '-' || b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9':
		case b == ':' && bracketed:
		default:
			return fmt.Errorf("invalid host %q (IPv6 addresses go in brackets: qdrant://[::1]:6334)", h)
		}
	}
	if bracketed && net.ParseIP(h) == nil {
		return fmt.Errorf("invalid IPv6 address %q", h)
	}
	return nil
}

// parseBool accepts the spellings people type for flags in URLs.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not 1/0/true/false", v)
}

// validEnvName reports whether v is a portable environment variable name.
func validEnvName(v string) bool {
	if v == "" || len(v) > 255 || (v[0] >= '0' && v[0] <= '9') {
		return false
	}
	for i := 0; i < len(v); i++ {
		b := v[i]
		if !(b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9') {
			return false
		}
	}
	return true
}

// maxNameLen is Qdrant's limit on a collection name's length.
const maxNameLen = 255

// nameByte reports whether b may appear in a collection name. Qdrant
// itself forbids only a few characters (/ \ : * ? " < > | and NUL), but
// names also become directory names on the server and appear in URLs of its
// REST API and dashboard, so stem keeps to letters, digits, '_', '-' and '.'.
func nameByte(b byte) bool {
	return b == '_' || b == '-' || b == '.' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// checkCollectionName reports why name is not a collection name stem uses.
func checkCollectionName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("collection name must be 1..%d characters, got %d", maxNameLen, len(name))
	}
	if name[0] == '.' {
		return fmt.Errorf("collection name %q must not start with '.'", name)
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i]) {
			return fmt.Errorf("collection name %q: character %q not allowed (letters, digits, _ - . only)", name, name[i])
		}
	}
	return nil
}

// CollectionName is the collection that holds the entity vectors of the KG
// identified by kgID (for example kgvec's content hash of the KG file) under
// the encoder encoderID (its name and dimension):
//
//	stem_<kgID>__<encoderID>_<hash>
//
// Characters outside letters, digits, '_', '-' and '.' become '_', and each
// part is shortened to keep the name within Qdrant's 255 characters. Since
// that can map two inputs to one readable name, the 12 hex digits of a
// SHA-256 of the exact inputs are appended: distinct (kgID, encoderID)
// pairs get distinct collections, while the readable part lets an operator
// recognise them in Qdrant's dashboard.
func CollectionName(kgID, encoderID string) string {
	h := sha256.Sum256([]byte(kgID + "\x00" + encoderID))
	return "stem_" + sanitize(kgID, 100) + "__" + sanitize(encoderID, 100) + "_" + hex.EncodeToString(h[:6])
}

// sanitize replaces the bytes nameByte rejects by '_' and cuts s to at most
// max bytes.
func sanitize(s string, max int) string {
	if len(s) > max {
		s = s[:max]
	}
	b := []byte(s)
	for i, c := range b {
		if !nameByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}
