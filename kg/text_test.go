package kg

import "testing"

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"barack obama", "barack obama"},
		{"Barack_Obama", "barack obama"},
		{"  Barack   Obama  ", "barack obama"},
		{"Schindler's List", "schindler s list"},
		{"location.location.nearby_airports", "location location nearby airports"},
		{"__people__person__gender", "people person gender"},
		{"Café_Müller", "café müller"},
		{"ÉCOLE—Normale «Supérieure»", "école normale supérieure"},
		{"Tōkyō\u3000Tower", "tōkyō tower"}, // ideographic space
		{"$", ""},
		{"C++ (language)", "c language"},
		{"1990", "1990"},
		{"a\tb\nc", "a b c"},
		{"\xffbad", "bad"}, // invalid UTF-8 is a separator
		{"ΑΘΗΝΑ", "αθηνα"},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	for _, s := range []string{"Barack_Obama", "Café_Müller", " x  y ", "m.0abc12", "A.B-C"} {
		once := Normalize(s)
		if twice := Normalize(once); twice != once {
			t.Errorf("Normalize(Normalize(%q)) = %q, want %q", s, twice, once)
		}
	}
}

func TestEntityText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Barack_Obama", "barack obama"},
		{"ludwig_ii_of_bavaria", "ludwig ii of bavaria"},
		{"m.0abc12", "m.0abc12"},
		{"g.11b6x_9", "g.11b6x_9"},
		{"m.", "m"},              // not a MID: no id part
		{"m.0ABC", "m 0abc"},     // MIDs are lower case
		{"McDonald", "mcdonald"}, // entity names are not camel-split
		{"http://dbpedia.org/resource/Barack_Obama", "barack obama"},
		{"http://rdf.freebase.com/ns/m.0abc12", "m.0abc12"},
		{"http://dbpedia.org/resource/Caf%C3%A9_Society", "café society"},
		{"_:b0", "b0"},
		{"$", "$"}, // MetaQA film title: no words, keep it readable
		{"Richard Brooks", "richard brooks"},
	}
	for _, tt := range tests {
		if got := EntityText(tt.in); got != tt.want {
			t.Errorf("EntityText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRelationText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"location.location.nearby_airports", "location location nearby airports"},
		{"__people__person__gender", "people person gender"},
		{"birthPlace", "birth place"},
		{"http://dbpedia.org/ontology/birthPlace", "birth place"},
		{"http://xmlns.com/foaf/0.1/name", "name"},
		{"http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "type"},
		{"http://rdf.freebase.com/ns/people.person.gender", "people person gender"},
		{"http://example.org/ont/", "ont"},
		{"directed_by", "directed by"},
		{"has_imdb_rating", "has imdb rating"},
		{"HTMLParser", "html parser"},
		{"isPartOf2", "is part of2"},
		{"population2010Total", "population2010 total"},
		{"P31", "p31"},
		{"urn:x:hasChild", "has child"},
		{"...", "..."},
	}
	for _, tt := range tests {
		if got := RelationText(tt.in); got != tt.want {
			t.Errorf("RelationText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
