package model

import (
	"container/heap"
	"fmt"
)

// byteChars maps each byte to the character that stands for it in a
// byte-level vocabulary (GPT-2's bytes_to_unicode): printable bytes map to
// themselves, the rest to U+0100 onwards.
var byteChars, charBytes = func() ([256]rune, map[rune]byte) {
	var bc [256]rune
	cb := make(map[rune]byte, 256)
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			bc[b] = rune(b)
		} else {
			bc[b] = rune(256 + n)
			n++
		}
		cb[bc[b]] = byte(b)
	}
	return bc, cb
}()

// byteLevelLen returns how many bytes a byte-level token string stands for,
// and whether every character of it is a byte-level character.
func byteLevelLen(tok string) (int, bool) {
	n := 0
	for _, r := range tok {
		if _, ok := charBytes[r]; !ok {
			return 0, false
		}
		n++
	}
	return n, n > 0
}

// wordIDs returns the BPE token ids of one pre-tokenized piece, cached.
func (t *Tokenizer) wordIDs(word string) ([]int, error) {
	t.mu.Lock()
	ids, ok := t.cache[word]
	t.mu.Unlock()
	if ok {
		return ids, nil
	}
	ids, err := t.merge(word)
	if err != nil {
		return nil, err
	}
	if len(word) <= 256 {
		t.mu.Lock()
		if len(t.cache) >= 1<<16 {
			clear(t.cache)
		}
		t.cache[word] = ids
		t.mu.Unlock()
	}
	return ids, nil
}

// symbol is one token of a word being merged, in a linked list.
type symbol struct {
	id         int
	prev, next int // -1 at the ends
	dead       bool
}

// candidate is a possible merge of the symbol at pos with its next one.
type candidate struct{ rank, pos, id int }

type candidates []candidate

func (c candidates) Len() int { return len(c) }
func (c candidates) Less(i, j int) bool {
	if c[i].rank != c[j].rank {
		return c[i].rank < c[j].rank
	}
	return c[i].pos < c[j].pos
}
func (c candidates) Swap(i, j int) { c[i], c[j] = c[j], c[i] }
func (c *candidates) Push(x any)   { *c = append(*c, x.(candidate)) }
func (c *candidates) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}

// merge applies the merges to the word's bytes, lowest rank first and
// leftmost among equals, as Hugging Face's BPE does; with ignore_merges a
// word that is a token of its own is taken whole. It runs in O(n log n).
func (t *Tokenizer) merge(word string) ([]int, error) {
	if t.ignoreMerges {
		if id, ok := t.vocab[toByteLevel(word)]; ok {
			return []int{id}, nil
		}
	}
	syms := make([]symbol, len(word))
	for i := 0; i < len(word); i++ {
		id := t.byteIDs[word[i]]
		if id < 0 {
			return nil, fmt.Errorf("tokenizer: byte 0x%02x has no token in the vocabulary", word[i])
		}
		syms[i] = symbol{id: id, prev: i - 1, next: i + 1}
	}
	if len(syms) == 0 {
		return nil, nil
	}
	syms[len(syms)-1].next = -1
	var q candidates
	for i := 0; i+1 < len(syms); i++ {
		if m, ok := t.merges[[2]int{syms[i].id, syms[i+1].id}]; ok {
			q = append(q, candidate{m.rank, i, m.id})
		}
	}
	heap.Init(&q)
	for q.Len() > 0 {
		c := heap.Pop(&q).(candidate)
		s := &syms[c.pos]
		if s.dead || s.next < 0 {
			continue
		}
		right := &syms[s.next]
		if m, ok := t.merges[[2]int{s.id, right.id}]; !ok || m.id != c.id {
			continue // stale: a neighbour changed since this was queued
		}
		s.id = c.id
		right.dead = true
		s.next = right.next
		if s.next >= 0 {
			syms[s.next].prev = c.pos
		}
		if s.prev >= 0 {
			if m, ok := t.merges[[2]int{syms[s.prev].id, s.id}]; ok {
				heap.Push(&q, candidate{m.rank, s.prev, m.id})
			}
		}
		if s.next >= 0 {
			if m, ok := t.merges[[2]int{s.id, syms[s.next].id}]; ok {
				heap.Push(&q, candidate{m.rank, c.pos, m.id})
			}
		}
	}
	var ids []int
	for i := 0; i >= 0; i = syms[i].next {
		ids = append(ids, syms[i].id)
	}
	return ids, nil
}

// toByteLevel maps each byte of s to its byte-level character.
func toByteLevel(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = byteChars[s[i]]
	}
	return string(r)
}
