/* SPDX-License-Identifier: BSD-3-Clause */
/* Aho-Corasick automaton (see ac.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ac.h"

static int
grow(void **p, uint32_t n, size_t elem)
{
	void *q = realloc(*p, (size_t)n * elem);

	if (q == NULL)
		return -ENOMEM;
	*p = q;
	return 0;
}

/* @return a new state with no transitions, or AC_NONE. */
static uint32_t
new_state(struct ac *a, int *err)
{
	uint32_t s = a->n_states;

	if (s == a->max_states) {
		*err = -ENOSPC;
		return AC_NONE;
	}
	if (s == a->cap_states) {
		uint32_t cap = a->cap_states ? a->cap_states * 2 : 64;

		if (cap > a->max_states)
			cap = a->max_states;
		if (grow((void **)&a->next, cap, 256 * sizeof(uint32_t)) < 0 ||
		    grow((void **)&a->first_pat, cap, sizeof(uint32_t)) < 0) {
			*err = -ENOMEM;
			return AC_NONE;
		}
		a->cap_states = cap;
	}
	/* 0 means "no edge" while building: no trie edge leads to root */
	memset(&a->next[(size_t)s * 256], 0, 256 * sizeof(uint32_t));
	a->first_pat[s] = AC_NONE;
	a->n_states++;
	return s;
}

int
ac_init(struct ac *a, uint32_t max_states)
{
	int err = 0;

	memset(a, 0, sizeof(*a));
	if (max_states > AC_ROW / 256 + 1)
		max_states = AC_ROW / 256 + 1;	/* rows fit below AC_HIT */
	a->max_states = max_states ? max_states : 1;
	return new_state(a, &err) == AC_NONE ? err : 0;
}

int
ac_add(struct ac *a, const uint8_t *pat, uint32_t len, uint32_t id)
{
	uint32_t s = 0, i, p;
	int err = 0;

	if (len == 0 || a->built)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		uint32_t t = a->next[(size_t)s * 256 + pat[i]];

		if (t == 0) {
			if ((t = new_state(a, &err)) == AC_NONE)
				return err;
			a->next[(size_t)s * 256 + pat[i]] = t;
		}
		s = t;
	}
	if (a->n_pats == a->cap_pats) {
		uint32_t cap = a->cap_pats ? a->cap_pats * 2 : 64;

		if (grow((void **)&a->pat_next, cap, sizeof(uint32_t)) < 0 ||
		    grow((void **)&a->pat_id, cap, sizeof(uint32_t)) < 0 ||
		    grow((void **)&a->pat_len, cap, sizeof(uint32_t)) < 0)
			return -ENOMEM;
		a->cap_pats = cap;
	}
	p = a->n_pats++;
	a->pat_id[p] = id;
	a->pat_len[p] = len;
	/* append: patterns of a state are reported in the order added */
	a->pat_next[p] = AC_NONE;
	if (a->first_pat[s] == AC_NONE) {
		a->first_pat[s] = p;
	} else {
		for (i = a->first_pat[s]; a->pat_next[i] != AC_NONE; i = a->pat_next[i])
			;
		a->pat_next[i] = p;
	}
	return 0;
}

int
ac_build(struct ac *a)
{
	uint32_t *queue, *fail, head = 0, tail = 0, s, t, c;

	if (a->built)
		return -EINVAL;
	fail = calloc(a->n_states, sizeof(uint32_t));
	queue = malloc(a->n_states * sizeof(uint32_t));
	a->report = malloc(a->n_states * sizeof(uint32_t));
	a->dict = malloc(a->n_states * sizeof(uint32_t));
	if (fail == NULL || queue == NULL || a->report == NULL ||
	    a->dict == NULL) {
		free(fail);
		free(queue);
		return -ENOMEM;
	}
	a->report[0] = a->dict[0] = AC_NONE;	/* no empty pattern */
	for (c = 0; c < 256; c++)
		if ((t = a->next[c]) != 0)
			queue[tail++] = t;	/* fail[t] = 0: the root */
	/* Breadth first: a state's failure state is shallower, so its row
	 * and its report are complete by the time the state is dequeued. */
	while (head < tail) {
		s = queue[head++];
		a->dict[s] = a->report[fail[s]];
		a->report[s] = a->first_pat[s] != AC_NONE ? s : a->dict[s];
		for (c = 0; c < 256; c++) {
			uint32_t *e = &a->next[(size_t)s * 256 + c];
			uint32_t f = a->next[(size_t)fail[s] * 256 + c];

			if (*e != 0) {
				fail[*e] = f;
				queue[tail++] = *e;
			} else {
				*e = f;
			}
		}
	}
	free(queue);
	free(fail);
	/* The walks' form of the table: each entry is its state's row
	 * (state * 256) with AC_HIT when patterns end there, so a step is
	 * one load, no multiply and no look at report[]. */
	for (s = 0; s < a->n_states; s++)
		for (c = 0; c < 256; c++) {
			uint32_t *e = &a->next[(size_t)s * 256 + c];

			*e = *e * 256 | (a->report[*e] != AC_NONE ? AC_HIT : 0);
		}
	a->built = 1;
	return 0;
}

/* One byte of a walk: *@p row moves on; @return 1 if patterns end in
 * the state it reaches. */
static inline uint32_t
step(const struct ac *a, uint32_t *row, uint8_t byte)
{
	uint32_t e = a->next[*row + byte];

	*row = e & AC_ROW;
	return e >> AC_HIT_SHIFT;
}

uint32_t
ac_scan(const struct ac *a, const uint8_t *data, uint32_t len, ac_match_fn fn,
	void *arg)
{
	uint32_t row = 0, n = 0, i, r, p;

	for (i = 0; i < len; i++) {
		if (!step(a, &row, data[i]))
			continue;
		for (r = a->report[row / 256]; r != AC_NONE; r = a->dict[r])
			for (p = a->first_pat[r]; p != AC_NONE; p = a->pat_next[p]) {
				n++;
				if (fn(a->pat_id[p], a->pat_len[p], i + 1, arg))
					return n;
			}
	}
	return n;
}

unsigned
ac_reports(const struct ac *a, const uint8_t *const *data,
	   const uint32_t *len, unsigned n)
{
	uint32_t row[AC_LANES] = { 0 }, min = UINT32_MAX, max = 0, i;
	unsigned j, hit = 0;

	for (j = 0; j < n; j++) {
		max = len[j] > max ? len[j] : max;
		min = len[j] < min ? len[j] : min;
	}
	/* Every stream has a byte at i below the shortest length: no test
	 * per lane (the common case: a burst of like packets). */
	for (i = 0; n == AC_LANES && i < min; i++)
		for (j = 0; j < AC_LANES; j++)
			hit |= step(a, &row[j], data[j][i]) << j;
	for (; i < max; i++)
		for (j = 0; j < n; j++)
			if (i < len[j])
				hit |= step(a, &row[j], data[j][i]) << j;
	return hit;
}

void
ac_free(struct ac *a)
{
	free(a->next);
	free(a->first_pat);
	free(a->report);
	free(a->dict);
	free(a->pat_next);
	free(a->pat_id);
	free(a->pat_len);
	memset(a, 0, sizeof(*a));
}
