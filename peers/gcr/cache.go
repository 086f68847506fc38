package gcr

import (
	"container/list"
	"strconv"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/peers/signals"
)

// trieCache keeps the most recently used tries, keyed by anchor set and
// hops, so that questions about the same entities share one build. It is
// bounded by entries, not bytes: a trie is bounded by Limits already.
type trieCache struct {
	mu  sync.Mutex
	max int
	ll  *list.List // of *cacheEntry, most recent first
	m   map[string]*list.Element
}

type cacheEntry struct {
	key  string
	trie *signals.Trie
}

func newTrieCache(max int) *trieCache {
	return &trieCache{max: max, ll: list.New(), m: map[string]*list.Element{}}
}

// cacheKey names a trie by its sorted anchors and hops.
func cacheKey(anchors []int32, hops int) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(hops))
	for _, a := range anchors {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(int(a)))
	}
	return b.String()
}

func (c *trieCache) get(key string) (*signals.Trie, bool) {
	if c == nil || c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*cacheEntry).trie, true
}

func (c *trieCache) put(key string, t *signals.Trie) {
	if c == nil || c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.ll.MoveToFront(el)
		return
	}
	c.m[key] = c.ll.PushFront(&cacheEntry{key: key, trie: t})
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*cacheEntry).key)
	}
}

func (c *trieCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
