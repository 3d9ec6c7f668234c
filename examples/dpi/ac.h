/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Aho-Corasick multi-pattern matching (Aho & Corasick, CACM 1975): every
 * occurrence of every pattern in one pass over the data, whatever the
 * number of patterns.
 *
 * Patterns go into a trie; ac_build() computes failure links breadth
 * first and folds them into a full transition table (a DFA: one table
 * read per byte, no backtracking).  Each state knows the patterns that
 * end there, and links to the next state on its failure chain that ends
 * patterns too, so overlapping patterns and patterns that are suffixes of
 * others are all reported.
 *
 *   struct ac a;
 *   ac_init(&a, 65536);
 *   ac_add(&a, (const uint8_t *)"he", 2, 0);
 *   ac_add(&a, (const uint8_t *)"she", 3, 1);
 *   ac_build(&a);
 *   ac_scan(&a, data, len, on_match, arg);   // "ushers": 1 at 3, 0 at 3
 *
 * Memory: 1 KiB per state (states <= total pattern bytes + 1, at most
 * 2^23).
 */
#ifndef XNV_EX_AC_H
#define XNV_EX_AC_H

#include <stdint.h>

#define AC_NONE UINT32_MAX
/* After ac_build(), next[] holds rows, not states: a state's row is
 * state * 256 (AC_ROW), with AC_HIT set when patterns end in it. */
#define AC_HIT_SHIFT 31
#define AC_HIT (1u << AC_HIT_SHIFT)
#define AC_ROW (AC_HIT - 1)

struct ac {
	uint32_t *next;		/* [state * 256 + byte] -> state; once
				 * built, -> its row | AC_HIT (above) */
	uint32_t *first_pat;	/* state -> first pattern ending there */
	uint32_t *report;	/* state -> itself if patterns end there,
				 * else dict[state] */
	uint32_t *dict;		/* state -> nearest state strictly up its
				 * failure chain where patterns end, or
				 * AC_NONE */
	uint32_t n_states, cap_states, max_states;
	uint32_t *pat_next;	/* pattern -> next pattern of its state */
	uint32_t *pat_id, *pat_len;
	uint32_t n_pats, cap_pats;
	int built;
};

/** Called for each occurrence: pattern @p id ends at byte @p end - 1 of
 *  the data (it starts at end - len).  Return non-zero to stop. */
typedef int (*ac_match_fn)(uint32_t id, uint32_t len, uint32_t end,
			   void *arg);

/** An empty automaton of at most @p max_states states.
 *  @return 0 or -ENOMEM. */
int ac_init(struct ac *a, uint32_t max_states);

/** Add a pattern of @p len >= 1 bytes with caller's @p id (ids may
 *  repeat; equal patterns are all reported).  Before ac_build() only.
 *  @return 0, -EINVAL (empty, or built), -ENOSPC (max_states), -ENOMEM. */
int ac_add(struct ac *a, const uint8_t *pat, uint32_t len, uint32_t id);

/** Compute failure links and the DFA.  @return 0 or -ENOMEM. */
int ac_build(struct ac *a);

/** Report every occurrence in @p data, in order of their end.
 *  @return occurrences reported. */
uint32_t ac_scan(const struct ac *a, const uint8_t *data, uint32_t len,
		 ac_match_fn fn, void *arg);

/** Most streams ac_reports() walks at once. */
#define AC_LANES 4

/** Which of @p n (<= AC_LANES) streams @p data[i] of @p len[i] bytes hold
 *  an occurrence: bit i set when ac_scan() of stream i would report one.
 *  The streams are walked side by side, a byte of each in turn: each
 *  walk is a chain of dependent loads, and walks of several streams
 *  overlap where one would wait.  Nothing is reported: ac_scan() the
 *  streams whose bit is set. */
unsigned ac_reports(const struct ac *a, const uint8_t *const *data,
		    const uint32_t *len, unsigned n);

void ac_free(struct ac *a);

#endif /* XNV_EX_AC_H */
