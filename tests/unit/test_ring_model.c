/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the sleep protocol (ring.h, "Sleeping on a ring") as a
 * model: the two sides on a machine with store buffers (x86's TSO),
 * every interleaving of their steps explored; with the fences no
 * interleaving loses a wake-up, and without them one does (so the model
 * does see the race).  The calls themselves and a two-thread stress over
 * a real eventfd: test_ring_sleep.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_fixture.h"

/* ---- the model: every interleaving, with store buffers --------------- */

/*
 * Two threads run the protocol's steps (ring.h: C1..C6 and P1..P5) on a
 * machine whose stores go through a FIFO store buffer per thread, drained
 * to memory at any moment (one store per step) and at once by a fence;
 * loads read their own thread's newest buffered store of the word, else
 * memory.  That is x86's TSO, where the only reordering is a store
 * passing a later load: the very one the protocol's two fences are there
 * for.  (Weaker machines: the C11 argument in ring.h.)  The producer
 * publishes MODEL_PUBLISHES descriptors, one at a time, deciding after
 * each whether to kick (gnts_ring_kick_due, the real decision) or
 * publishing the next first and deciding for both at once; the
 * consumer loops: consume what it sees, else set its word, fence, look
 * again, sleep until kicked (the doorbell latches, as an eventfd does),
 * clear its word.  A state where nothing can move is an end: the
 * consumer asleep.  The explorer visits every state reachable from the
 * start (a depth-first search with a table of states seen), so every
 * interleaving of every step; it counts them (paths) too.  Indices start
 * near UINT32_MAX, so the decision's arithmetic wraps.
 */
#define MODEL_PUBLISHES 3
#define MODEL_BUF 4
#define MODEL_BASE (UINT32_MAX - 1)

enum { W_PROD, W_SLEEP, W_DESC0 };	/* words: prod, the sleep word, descs */

struct mstore {
	uint8_t word, val;
};

/* Everything small: indices are offsets from MODEL_BASE, the sleep word
 * is 0 or 0x80 | offset. */
struct mstate {
	uint8_t mem[W_DESC0 + MODEL_PUBLISHES];
	uint8_t doorbell;		/* latched kicks not yet taken */
	uint8_t ppc, pj, kick_idx, pw;	/* producer: step, publish, private */
	uint8_t cpc, cidx, cp;		/* consumer: step, index, prod seen */
	uint8_t kicks, sleeps;		/* kicks sent, words set */
	uint8_t pn, cn;			/* stores buffered */
	struct mstore pbuf[MODEL_BUF], cbuf[MODEL_BUF];
};

struct model {
	int fences;			/* 0: the fences do nothing */
	uint64_t states, ends, lost, too_many_kicks, bad_desc;
	double paths;
	struct mslot {
		struct mstate s;
		double paths;
		uint8_t used;
	} *tab;
	size_t cap;
};

/* The sleep word the model's byte stands for. */
static uint64_t
msleep_word(uint8_t v)
{
	return v & 0x80 ? GNTS_RING_ASLEEP |
			  (uint32_t)(MODEL_BASE + (v & 0x7f)) : 0;
}

static uint8_t
mload(const struct mstate *s, const struct mstore *buf, uint8_t n,
      uint8_t word)
{
	for (int i = n - 1; i >= 0; i--)
		if (buf[i].word == word)
			return buf[i].val;
	return s->mem[word];
}

/* 0 if the buffer is full: the store waits for a drain, as on a CPU. */
static int
mstore(struct mstore *buf, uint8_t *n, uint8_t word, uint8_t val)
{
	if (*n == MODEL_BUF)
		return 0;
	buf[(*n)++] = (struct mstore){ word, val };
	return 1;
}

static void
mdrain(struct mstate *s, struct mstore *buf, uint8_t *n)
{
	s->mem[buf[0].word] = buf[0].val;
	memmove(buf, buf + 1, (size_t)(--(*n)) * sizeof(*buf));
	memset(&buf[*n], 0, sizeof(*buf));
}

/* Producer step; 0 if it cannot move.  ppc: 0 P1 write the descriptor,
 * 1 P2 publish prod, 2 P3 fence, 3 P4 read the word, 4 P5 decide/kick. */
static int
mstep_producer(struct model *m, struct mstate *s)
{
	switch (s->ppc) {
	case 0:
		if (s->pj == MODEL_PUBLISHES)
			return 0;
		if (!mstore(s->pbuf, &s->pn, W_DESC0 + s->pj, 1))
			return 0;
		break;
	case 1:
		if (!mstore(s->pbuf, &s->pn, W_PROD, s->pj + 1))
			return 0;
		break;
	case 2:
		if (m->fences) {
			if (s->pn != 0)
				return 0;	/* a fence waits for its stores */
		}
		break;
	case 3:
		s->pw = mload(s, s->pbuf, s->pn, W_SLEEP);
		break;
	case 4:
		if (gnts_ring_kick_due(msleep_word(s->pw),
				       (uint32_t)(MODEL_BASE + s->kick_idx),
				       (uint32_t)(MODEL_BASE + s->pj + 1))) {
			s->doorbell++;
			s->kicks++;
		}
		s->kick_idx = s->pj + 1;
		s->pj++;
		s->ppc = 0;
		return 1;
	}
	s->ppc++;
	return 1;
}

/* Consumer step; 0 if it cannot move.  cpc: 0 C1 load prod (consume what
 * is there), 1 C2 set the word, 2 C3 fence, 3 C4 load prod again, 4 C5
 * sleep until a kick, 5 C6 clear the word. */
static int
mstep_consumer(struct model *m, struct mstate *s)
{
	switch (s->cpc) {
	case 0:
		s->cp = mload(s, s->cbuf, s->cn, W_PROD);
		if (s->cp != s->cidx) {
			/* The ring's acquire: every descriptor up to prod is
			 * there (P1 before P2). */
			for (uint8_t i = s->cidx; i < s->cp; i++)
				if (mload(s, s->cbuf, s->cn, W_DESC0 + i) != 1)
					m->bad_desc++;
			s->cidx = s->cp;
			return 1;
		}
		break;
	case 1:
		if (!mstore(s->cbuf, &s->cn, W_SLEEP,
			    (uint8_t)(0x80 | s->cidx)))
			return 0;
		s->sleeps++;
		break;
	case 2:
		if (m->fences && s->cn != 0)
			return 0;
		break;
	case 3:
		s->cp = mload(s, s->cbuf, s->cn, W_PROD);
		s->cpc = s->cp != s->cidx ? 5 : 4;
		return 1;
	case 4:
		if (s->doorbell == 0)
			return 0;		/* asleep */
		s->doorbell--;
		break;
	case 5:
		if (!mstore(s->cbuf, &s->cn, W_SLEEP, 0))
			return 0;
		s->cpc = 0;
		return 1;
	}
	s->cpc++;
	return 1;
}

static size_t
mhash(const struct mstate *s)
{
	const uint8_t *b = (const uint8_t *)s;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*s); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return (size_t)h;
}

/* The table slot of @p s: found, or new (used == 0). */
static struct mslot *
mslot(struct model *m, const struct mstate *s)
{
	size_t i = mhash(s) & (m->cap - 1);

	while (m->tab[i].used && memcmp(&m->tab[i].s, s, sizeof(*s)) != 0)
		i = (i + 1) & (m->cap - 1);
	return &m->tab[i];
}

/* Interleavings from @p s to an end (each end checked once). */
static double
mexplore(struct model *m, const struct mstate *s)
{
	struct mslot *slot = mslot(m, s);
	double paths = 0;
	int moved = 0;

	if (slot->used)
		return slot->paths;
	assert_true(++m->states < m->cap / 2);
	for (int a = 0; a < 5; a++) {
		struct mstate n = *s;
		int ok;

		switch (a) {
		case 0: ok = mstep_producer(m, &n); break;
		case 1: ok = mstep_consumer(m, &n); break;
		case 2: ok = n.pn != 0; if (ok) mdrain(&n, n.pbuf, &n.pn); break;
		case 3: ok = n.cn != 0; if (ok) mdrain(&n, n.cbuf, &n.cn); break;
		default:
			/* The producer may publish again before deciding
			 * (need_kick after several bursts): not after the
			 * last publish. */
			ok = n.ppc == 2 && n.pj + 1 < MODEL_PUBLISHES;
			if (ok) {
				n.pj++;
				n.ppc = 0;
			}
			break;
		}
		if (ok) {
			moved = 1;
			paths += mexplore(m, &n);
		}
	}
	if (!moved) {
		/* An end: the producer is done, every store is in memory,
		 * the consumer sleeps.  Lost: it sleeps on a non-empty ring
		 * with no kick latched (doorbell 0: it could not move). */
		assert_int_equal(s->pj, MODEL_PUBLISHES);
		assert_int_equal(s->cpc, 4);
		m->ends++;
		if (s->mem[W_PROD] != s->cidx)
			m->lost++;
		if (s->kicks > s->sleeps)
			m->too_many_kicks++;
		paths = 1;
	}
	slot = mslot(m, s);	/* the table does not move; the slot is ours */
	slot->s = *s;
	slot->paths = paths;
	slot->used = 1;
	return paths;
}

static void
model_run(struct model *m, int fences)
{
	struct mstate s0;

	memset(m, 0, sizeof(*m));
	m->fences = fences;
	m->cap = 1u << 20;
	m->tab = calloc(m->cap, sizeof(*m->tab));
	assert_non_null(m->tab);
	memset(&s0, 0, sizeof(s0));
	m->paths = mexplore(m, &s0);
	free(m->tab);
	printf("# model, fences %s: %llu states, %llu ends, %.3g interleavings, "
	       "%llu lost wake-ups\n", fences ? "on" : "off",
	       (unsigned long long)m->states, (unsigned long long)m->ends,
	       m->paths, (unsigned long long)m->lost);
}

/* With both fences: no interleaving ends with the consumer asleep on a
 * non-empty ring and no kick; never more kicks than sleeps; every
 * descriptor there when prod says so. */
TEST(test_model_no_lost_wakeup)
{
	struct model m;

	model_run(&m, 1);
	assert_true(m.ends > 0);
	assert_true(m.paths > 1e6);	/* a real enumeration, not a few runs */
	assert_int_equal(m.lost, 0);
	assert_int_equal(m.too_many_kicks, 0);
	assert_int_equal(m.bad_desc, 0);
}

/* Without them (release / acquire only): the model finds the race, a
 * store buffered past the other side's load on both sides. */
TEST(test_model_sees_race_without_fences)
{
	struct model m;

	model_run(&m, 0);
	assert_true(m.lost > 0);
	assert_int_equal(m.bad_desc, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_no_lost_wakeup),
		cmocka_unit_test(test_model_sees_race_without_fences),
	};

	return cmocka_run_group_tests_name("gntshare_ring_model", tests, NULL,
					   NULL);
}
