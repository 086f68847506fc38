// Package demo embeds a small, hand-written knowledge graph and a set of
// PathQuestion-style questions over it, so that stem's quick start and the
// unit tests of other packages run without downloading anything.
//
// # Content
//
// kg.tsv holds 447 triples (279 entities, 26 relations) about films, the
// people who made and acted in them, the books some were adapted from, a few
// studios, universities, cities and countries. One triple per line,
// head<TAB>relation<TAB>tail, no header and no comment lines (the TSV loader
// has none). Entity names use '_' for spaces as PathQuestion does
// ("Christopher_Nolan", "United_Kingdom"); a few carry commas, dots,
// apostrophes, colons or non-ASCII letters ("Washington,_D.C.",
// "J._R._R._Tolkien", "Schindler's_List", "Amélie", "Whangārei") because real
// graphs do. Years ("2010") are plain tails, as in Freebase dumps.
//
// Relations are snake_case words (directed_by, starred_actors,
// place_of_birth, located_in, ...) except three Freebase-style ids used for
// one sub-domain only, so that the encoder's symbol splitting is exercised
// without the same fact appearing under two names:
// location.country.currency_used, location.location.nearby_airports and
// location.location.time_zones.
//
// Shapes the retrieval code must cope with, all present on purpose:
//   - a hub: United_States has 64 edges (country_of_origin of films,
//     nationality of people, located_in of cities, and its own capital,
//     language and currency);
//   - a clean 3-hop chain: Inception -directed_by-> Christopher_Nolan
//     -place_of_birth-> London -located_in-> United_Kingdom ("In which
//     country was the director of Inception born?");
//   - multi-answer relations: five starred_actors of Inception, four
//     language_spoken of Switzerland, three capitals of South_Africa, people
//     with several spouses over time (Nicole_Kidman, Tom_Cruise,
//     Michelle_Yeoh, James_Cameron);
//   - parallel edges between one pair: Inception directed_by and written_by
//     Christopher_Nolan (likewise The_Godfather and Francis_Ford_Coppola);
//   - a path that repeats a relation: Yonsei_University -located_in-> Seoul
//     -located_in-> South_Korea.
//
// questions.tsv holds 37 questions (13 one-hop, 15 two-hop, 9 three-hop; 20
// with several gold answers) in PathQuestion's exact line format, checked
// against PQ-2H.txt and PQ-3H.txt:
//
//	question<TAB>answer(gold1/gold2/.../)<TAB>subj#rel1#ent1#...#answer#<end>#answer
//
// The path is one witness chain through the graph and answer is its last
// entity; the parenthesised list is every entity reached by following the
// path's relations from the subject, so it is the complete gold set. The
// subject is written in the question as natural text ("who directed
// inception ?"), lower case with PathQuestion's spacing.
//
// # Provenance
//
// Written by hand for stem from well-known public facts (directors, casts,
// release and publication years, birthplaces, spouses, awards, capitals,
// official languages and currencies), correct as of 2024. The graph is
// deliberately incomplete (not every cast member, spouse or language is
// listed), but no triple is meant to be false; the question answers are
// exact with respect to this graph, which the package tests verify. Spouse
// edges are not symmetric: the reverse edge is stored only where both
// partners are subjects of their own (Tom_Cruise and Nicole_Kidman,
// Greta_Gerwig and Noah_Baumbach).
package demo
