package compose

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/projection/linking"
)

func TestDebugDump(t *testing.T) {
	kgPath, qPath := os.Getenv("DBG_KG"), os.Getenv("DBG_Q")
	if kgPath == "" {
		t.Skip()
	}
	ctx := context.Background()
	g, err := kg.Load(ctx, kgPath, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	enc, _, err := catalog.OpenEncoder(ctx, catalog.DefaultEncoderSettings(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(ctx, g, enc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(qPath)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() && n < 40 {
		n++
		fs := strings.Split(sc.Text(), "\t")
		q := fs[0]
		var ent string
		if m, _, ok := linking.Marked(q); ok {
			ent = m
		} else {
			ent = strings.Split(fs[2], "#")[0]
		}
		rq := read(q, linking.Mentions(q, []string{ent}))
		pr, err := p.Predict(ctx, q, []string{ent}, nil)
		if err != nil {
			fmt.Println("ERR", err)
			continue
		}
		fmt.Printf("%s\n   words=%v typ=%d wh=%s share=%v\n", q, rq.words, rq.typ, rq.wh, rq.share)
		if len(fs) > 2 {
			fmt.Printf("   gold=%s\n", fs[2])
		}
		for _, c := range pr.Paths[:min(3, len(pr.Paths))] {
			fmt.Printf("   %.3f %v reach=%d\n", c.Score, c.Steps, c.Reach)
		}
	}
}
