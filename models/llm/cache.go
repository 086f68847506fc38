package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/stem-kgqa/stem/atomicfile"
)

// cacheVersion is part of every key: bump it when the key or the file format
// changes, and old entries simply stop matching.
const cacheVersion = 1

// cache stores replies as one small JSON file per request under
// dir/<first 2 hex digits>/<sha256>.json. Files are written atomically, so a
// reader sees a whole entry or none; an entry that fails to decode (a crash
// with an older writer, a hand edit) is treated as a miss and overwritten.
type cache struct {
	dir string

	mu       sync.Mutex
	firstErr error // first write failure, reported by Client.Close
}

func openCache(dir string) (*cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("response cache: %w", err)
	}
	return &cache{dir: dir}, nil
}

// keyData is what identifies a request: everything that changes the
// distribution of replies. Encoding a struct with encoding/json gives a
// canonical byte string (fixed field order, exact float formatting).
type keyData struct {
	Version     int       `json:"v"`
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	TopP        float64   `json:"top_p"`
	MaxTokens   int       `json:"max_tokens"`
	N           int       `json:"n"`
	Seed        *int64    `json:"seed"`
	Stop        []string  `json:"stop"`
}

// cacheKey is the hex SHA-256 of the request's identifying fields. N is
// normalised (0 and 1 are the same request) and so is an empty Stop.
func cacheKey(model string, req Request) (string, error) {
	k := keyData{
		Version: cacheVersion, Model: model, Messages: req.Messages,
		Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxTokens,
		N: max(req.N, 1), Seed: req.Seed, Stop: req.Stop,
	}
	if len(k.Stop) == 0 {
		k.Stop = nil
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", fmt.Errorf("response cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// entry is the file format.
type entry struct {
	Version       int      `json:"v"`
	Model         string   `json:"model"`
	Choices       []string `json:"choices"`
	FinishReasons []string `json:"finish_reasons"`
}

func (c *cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// get returns the cached reply for key if there is a usable one with n
// choices.
func (c *cache) get(key string, n int) (Reply, bool) {
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return Reply{}, false
	}
	var e entry
	if json.Unmarshal(data, &e) != nil || e.Version != cacheVersion ||
		len(e.Choices) != n || len(e.FinishReasons) != n {
		return Reply{}, false
	}
	return Reply{Choices: e.Choices, FinishReasons: e.FinishReasons, Cached: true}, true
}

// put stores r under key. A failure is remembered, not returned: the reply
// is good whether or not it could be cached.
func (c *cache) put(key, model string, r Reply) {
	p := c.path(key)
	err := os.MkdirAll(filepath.Dir(p), 0o755)
	if err == nil {
		e := entry{Version: cacheVersion, Model: model, Choices: r.Choices, FinishReasons: r.FinishReasons}
		err = atomicfile.Write(p, 0o644, func(w io.Writer) error {
			return json.NewEncoder(w).Encode(e)
		})
	}
	if err != nil {
		c.mu.Lock()
		if c.firstErr == nil {
			c.firstErr = err
		}
		c.mu.Unlock()
	}
}

func (c *cache) writeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.firstErr
}
