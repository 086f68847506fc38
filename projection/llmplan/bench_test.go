package llmplan

import "testing"

func BenchmarkParseDecomposition(b *testing.B) {
	reply := "Sure! Here is the plan:\n```\n((\"Jenny’s father is a character in movie [ENT1].\", \"[ENT2] is a character in [ENT1].\", \"[ENT3] portrayed [ENT2] in the film.\"), Precision)\n```"
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := ParseDecomposition(reply); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseTriples(b *testing.B) {
	reply := "[\n(\"Jenny’s Father\", \"film.film_character.portrayed_in_films\", \"[ENT1]\"),\n(\"[ENT2]\", \"film.film_character.portrayed_in_films\", \"[ENT1]\"),\n(\"[ENT2]\", \"film.performance.actor\", \"[ENT3]\"),\n]"
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := ParseTriples(reply); err != nil {
			b.Fatal(err)
		}
	}
}
