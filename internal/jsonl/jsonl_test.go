package jsonl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func readAll(t testing.TB, in string) (recs []string, good int64, err error) {
	t.Helper()
	good, err = Read(strings.NewReader(in), "f", func(text []byte) error {
		if string(text) != "H" {
			return errors.New("bad header")
		}
		return nil
	}, func(text []byte) error {
		if text[0] != 'r' {
			return errors.New("bad record")
		}
		recs = append(recs, string(text))
		return nil
	})
	return recs, good, err
}

func TestRead(t *testing.T) {
	for _, c := range []struct {
		name, in string
		recs     int
		good     int64
		err      string
	}{
		{"header only", "H\n", 0, 2, ""},
		{"records", "H\nr1\nr2\n", 2, 8, ""},
		{"blank lines skipped", "H\n\nr1\n  \nr2\n", 2, 12, ""},
		{"torn last line", "H\nr1\nr2", 1, 5, ""},
		{"bad last line is a crash trace", "H\nr1\nxx\n", 1, 5, ""},
		{"bad line before others", "H\nxx\nr1\n", 0, 0, "f:2: bad record"},
		{"bad header", "X\nr1\n", 0, 0, "f:1: bad header"},
		{"torn header", "H", 0, 0, "no whole header line"},
		{"empty", "", 0, 0, "empty file"},
		{"CRLF", "H\r\nr1\r\n", 1, 7, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs, good, err := readAll(t, c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != c.recs || good != c.good {
				t.Fatalf("got %d records, good %d; want %d, %d", len(recs), good, c.recs, c.good)
			}
		})
	}
}

// Whatever the input, Read does not panic, and good never points past
// the input or into the middle of a line.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"H\nr1\n", "H\nr1\nr2", "H\nxx\nr\n", "", "H", "\n\n", "H\r\n\r\nr\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		_, good, err := readAll(t, in)
		if err != nil {
			return
		}
		if good < 0 || good > int64(len(in)) {
			t.Fatalf("good = %d outside the input (%d bytes)", good, len(in))
		}
		if good > 0 && in[good-1] != '\n' {
			t.Fatalf("good = %d is not at a line end", good)
		}
	})
}

func TestLines(t *testing.T) {
	var got []string
	err := Lines(context.Background(), strings.NewReader("{\"a\":1}\n\n  \n{\"b\":2}\r\n{\"c\":3}"), "x.jsonl", func(n int, line []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", n, strings.TrimSpace(string(line))))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`1:{"a":1}`, `4:{"b":2}`, `5:{"c":3}`}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q (blank lines skipped, numbers kept)", got, want)
	}
	stop := errors.New("stop")
	if err := Lines(context.Background(), strings.NewReader("a\nb\n"), "x", func(int, []byte) error { return stop }); err != stop {
		t.Errorf("fn's error came back as %v, want it unchanged", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Lines(ctx, strings.NewReader("a\n"), "x", func(int, []byte) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: %v", err)
	}
}
