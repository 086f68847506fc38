package synth

// Names. Every generated name ends in a code word that spells the entity id
// in two-letter syllables, so names are unique by construction and differ
// after kg.Normalize too, except where namesakes are planted on purpose.
// The syllables use no e, f, h, l or w, so no code is a hub name ("Male",
// "Female") or an English word of the prefixes.

const (
	consonants = "bdgkmnprstvz"
	vowels     = "aiou"
	nSyl       = len(consonants) * len(vowels)
	// midDigits is Freebase's machine-id alphabet: digits, consonants, '_'.
	midDigits = "0123456789bcdfghjklmnpqrstvwxyz_"
)

func appendCode(b []byte, id int32) []byte {
	x := uint64(id) + uint64(nSyl) // at least two syllables
	var tmp [16]byte
	i := len(tmp)
	for x > 0 {
		s := x % uint64(nSyl)
		x /= uint64(nSyl)
		i -= 2
		tmp[i] = consonants[s/uint64(len(vowels))]
		tmp[i+1] = vowels[s%uint64(len(vowels))]
	}
	tmp[i] -= 'a' - 'A'
	return append(b, tmp[i:]...)
}

// appendMID writes a CVT's name: "m.0" and seven base-32 digits of the CVT
// number scrambled by an odd multiplier (a bijection on 32 bits), so ids
// look random as Freebase's do but never collide.
func appendMID(b []byte, n uint32) []byte {
	x := uint64((n + 1) * 0x9E3779B1)
	b = append(b, "m.0"...)
	var tmp [7]byte
	for i := 6; i >= 0; i-- {
		tmp[i] = midDigits[x&31]
		x >>= 5
	}
	return append(b, tmp[:]...)
}

// hash mixes an id into pseudo-random bits (splitmix64's finaliser), for
// choices that must follow from the id alone.
func hash(id int32) uint64 {
	z := uint64(id) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (g *gen) appendBaseName(b []byte, id int32) []byte {
	t := &g.s.types[g.typeOf[id]]
	if t.hub != nil {
		return append(b, t.hub[id-t.lo]...)
	}
	if len(t.style) > 0 {
		b = append(b, t.style[hash(id)%uint64(len(t.style))]...)
		b = append(b, ' ')
	}
	return appendCode(b, id)
}

// namesakeOf says whether named id is a planted namesake, of which entity,
// and in which spelling. Named non-hub ids are cut into blocks of 64:
// slot 63 of block b copies slot 0 of block b's partner (half the id space
// away, so usually another type: "Paris" the city and "paris" the person),
// and in every fourth block slot 62 copies slot 0 of its own block in
// lower case. Each (source, spelling) pair occurs once, so exact names stay
// unique.
func (g *gen) namesakeOf(id int32) (src int32, variant int, ok bool) {
	if id < g.nHub || id >= g.nNamed {
		return 0, 0, false
	}
	rel := id - g.nHub
	nb := (g.nNamed - g.nHub) / block / 2 * 2
	b, slot := rel/block, rel%block
	if b >= nb {
		return 0, 0, false
	}
	switch {
	case slot == block-1:
		p := b + nb/2
		if b >= nb/2 {
			p = b - nb/2
		}
		return g.nHub + p*block, 1 + int(b%3), true
	case slot == block-2 && b%4 == 0:
		return g.nHub + b*block, 0, true
	}
	return 0, 0, false
}

func (g *gen) appendName(b []byte, id int32) []byte {
	if id >= g.nNamed {
		return appendMID(b, uint32(id-g.nNamed))
	}
	src, v, ok := g.namesakeOf(id)
	if !ok {
		return g.appendBaseName(b, id)
	}
	start := len(b)
	b = g.appendBaseName(b, src)
	name := b[start:]
	switch v {
	case 0: // "anna kobami"
		for i, c := range name {
			if 'A' <= c && c <= 'Z' {
				name[i] = c + 'a' - 'A'
			}
		}
	case 1: // "Anna_Kobami"
		for i, c := range name {
			if c == ' ' {
				name[i] = '_'
			}
		}
	case 2: // "ANNA KOBAMI"
		for i, c := range name {
			if 'a' <= c && c <= 'z' {
				name[i] = c - ('a' - 'A')
			}
		}
	case 3: // "Anna-Kobami"
		for i, c := range name {
			if c == ' ' {
				name[i] = '-'
			}
		}
	}
	return b
}

func (g *gen) name(id int32) string { return string(g.appendName(nil, id)) }

// relWords is the text a relation contributes to a question.
func (g *gen) relWords(r int32) string { return g.s.rels[r].words }
