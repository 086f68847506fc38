package qdrant

import (
	"strings"
	"testing"
	"time"
)

func TestParseURL(t *testing.T) {
	good := []struct {
		in   string
		want Config
	}{
		{"qdrant://127.0.0.1:6334", Config{Host: "127.0.0.1", Port: 6334}},
		{"qdrant://localhost", Config{Host: "localhost", Port: 6334}},
		{"qdrant://db.example.org:7000/", Config{Host: "db.example.org", Port: 7000}},
		{"qdrant://[::1]:6334", Config{Host: "::1", Port: 6334}},
		{"qdrant://h:1?api-key-env=QDRANT_KEY&tls=1&collection=my_kg-v1.2&timeout=5s&approximate=true&batch=250",
			Config{Host: "h", Port: 1, APIKeyEnv: "QDRANT_KEY", TLS: true, Collection: "my_kg-v1.2", Timeout: 5 * time.Second, Approximate: true, BatchSize: 250}},
		{"qdrant://h?tls=false", Config{Host: "h", Port: 6334}},
	}
	for _, g := range good {
		got, err := ParseURL(g.in)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", g.in, err)
			continue
		}
		if got != g.want {
			t.Errorf("ParseURL(%q) = %+v, want %+v", g.in, got, g.want)
		}
	}
	bad := []struct{ in, wantErr string }{
		{"", "scheme"},
		{"127.0.0.1:6334", "qdrant://HOST:PORT"},
		{"http://127.0.0.1:6333", "scheme"},
		{"qdrant:127.0.0.1", "two slashes"},
		{"qdrant://", "missing host"},
		{"qdrant://:6334", "missing host"},
		{"qdrant://h:0", "port"},
		{"qdrant://h:65536", "port"},
		{"qdrant://h:", "empty port"},
		{"qdrant://h:x", ""},
		{"qdrant://user:secret@h:6334", "environment variable"},
		{"qdrant://h/collection", "path"},
		{"qdrant://h#frag", "fragment"},
		{"qdrant://h?api-key=abc", "must not be in the URL"},
		{"qdrant://h?api-key-env=1BAD", "environment variable name"},
		{"qdrant://h?api-key-env=", "environment variable name"},
		{"qdrant://h?tls=maybe", "tls"},
		{"qdrant://h?tls=1&tls=0", "2 times"},
		{"qdrant://h?collection=a/b", "not allowed"},
		{"qdrant://h?collection=", "1..255"},
		{"qdrant://h?collection=.hidden", "must not start"},
		{"qdrant://h?timeout=5", "duration"},
		{"qdrant://h?timeout=-1s", "duration"},
		{"qdrant://h?timeout=2h", "duration"},
		{"qdrant://h?batch=0", "whole number"},
		{"qdrant://h?batch=99999999", "whole number"},
		{"qdrant://h?colection=x", "unknown parameter"},
		{"qdrant://h?a=%zz", ""},
		{"qdrant://::1", "brackets"},
		{"qdrant://h%20x", ""},
		{"qdrant://[fe80::1%25eth0]:6334", "brackets"},
	}
	for _, b := range bad {
		_, err := ParseURL(b.in)
		if err == nil {
			t.Errorf("ParseURL(%q): no error", b.in)
			continue
		}
		if !strings.Contains(err.Error(), b.wantErr) {
			t.Errorf("ParseURL(%q) error %q, want it to mention %q", b.in, err, b.wantErr)
		}
	}
	for _, s := range []string{"qdrant://user:hunter2@h", "qdrant://user:hunter2@h:bad", "qdrant://u:hunter2@h/%zz"} {
		if _, err := ParseURL(s); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseURL(%q): error %v, want one that does not repeat the password", s, err)
		}
	}
}

// FuzzParseURL checks that ParseURL never panics, that what it accepts is
// usable (a host, a port in range, a valid collection name) and that
// Config.String reads back to the same Config.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"qdrant://127.0.0.1:6334",
		"qdrant://[::1]:6334?tls=1",
		"qdrant://h:1?api-key-env=K&collection=c&timeout=1ms&batch=7&approximate=0",
		"qdrant://h?collection=%2F",
		"qdrant://u@h",
		"http://x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseURL(s)
		if err != nil {
			return
		}
		if c.Host == "" || c.Port < 1 || c.Port > 65535 {
			t.Fatalf("ParseURL(%q) accepted %+v", s, c)
		}
		if c.Collection != "" {
			if err := checkCollectionName(c.Collection); err != nil {
				t.Fatalf("ParseURL(%q) accepted collection: %v", s, err)
			}
		}
		back, err := ParseURL(c.String())
		if err != nil {
			t.Fatalf("ParseURL(%q) = %+v, whose String %q does not parse: %v", s, c, c.String(), err)
		}
		if back != c {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v", s, c, c.String(), back)
		}
	})
}

func TestCollectionName(t *testing.T) {
	a := CollectionName("0123abcd", "wordvec-en/100")
	if !strings.HasPrefix(a, "stem_0123abcd__wordvec-en_100_") {
		t.Errorf("CollectionName = %q", a)
	}
	if err := checkCollectionName(a); err != nil {
		t.Error(err)
	}
	if a != CollectionName("0123abcd", "wordvec-en/100") {
		t.Error("CollectionName is not deterministic")
	}
	// Inputs that sanitise alike still get distinct collections.
	if a == CollectionName("0123abcd", "wordvec-en_100") || CollectionName("a", "b_c") == CollectionName("a_b", "c") {
		t.Error("distinct inputs share a collection")
	}
	long := CollectionName(strings.Repeat("k", 1000), strings.Repeat("é/", 500))
	if err := checkCollectionName(long); err != nil {
		t.Error(err)
	}
	if empty := CollectionName("", ""); checkCollectionName(empty) != nil {
		t.Errorf("CollectionName(\"\", \"\") = %q invalid", empty)
	}
}
