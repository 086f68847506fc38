package dataset

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzRead checks Read's resume contract on any input: it never panics;
// when it accepts a file, the prefix up to good reads back the same, ends
// with a whole line, and a resumed writer's next line (appended there) is
// read as one more item. Seeds are in testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"stem_data":1,"kind":"chains","config":{"format":"pq"}}` + "\n" +
		`{"id":"1","question":"q","entities":["a"],"answers":["b"],"masked":[["a","r","[ENT1]"]],"answer_slot":"[ENT1]","hops":1,"strategy":"Precision"}` + "\n" +
		`{"id":"2","question":"q","entities":null,"answers":null,"hops":0,"strategy":"Precision","dropped":"answers unreachable"}` + "\n" +
		`{"id":"3","question":"q","ent`))
	f.Add([]byte(`{"stem_data":1,"kind":"assertions"}` + "\n\n  \n"))
	next, err := json.Marshal(Item{ID: "fuzz-appended", Masked: [][3]string{{"a", "r", "[ENT1]"}}, Strategy: Precision})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, items, good, err := Read(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		if good <= 0 || good > int64(len(data)) || data[good-1] != '\n' {
			t.Fatalf("good = %d of %d bytes, not after a whole line", good, len(data))
		}
		if h.Version < 1 || h.Version > FormatVersion {
			t.Fatalf("accepted header version %d", h.Version)
		}
		for i := range items {
			if err := items[i].Check(); err != nil {
				t.Fatalf("accepted item: %v", err)
			}
		}
		h2, items2, good2, err := Read(bytes.NewReader(data[:good]), "fuzz.jsonl")
		if err != nil || good2 != good || !reflect.DeepEqual(h2, h) || !reflect.DeepEqual(items2, items) {
			t.Fatalf("prefix up to good reads differently: %d items (want %d), good %d (want %d), %v", len(items2), len(items), good2, good, err)
		}
		resumed := append(append(bytes.Clone(data[:good]), next...), '\n')
		_, items3, good3, err := Read(bytes.NewReader(resumed), "fuzz.jsonl")
		if err != nil || len(items3) != len(items)+1 || good3 != int64(len(resumed)) {
			t.Fatalf("after appending an item: %d items (want %d), good %d (want %d), %v", len(items3), len(items)+1, good3, len(resumed), err)
		}
	})
}
