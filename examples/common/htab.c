/* SPDX-License-Identifier: BSD-3-Clause */
/* Open-addressing hash table (see htab.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "htab.h"

#define SLOT(t, i)  ((t)->slots + (size_t)(i) * (t)->slot_size)

uint64_t
hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *b = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull), w;

	while (n >= 8) {
		memcpy(&w, b, 8);
		h = (h ^ (w * 0xff51afd7ed558ccdull)) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
		b += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, b, n);
	h = (h ^ (w * 0xff51afd7ed558ccdull)) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* One NH step: word @p w with key word @p k, halves added mod 2^32, then
 * multiplied into 64 bits. */
static inline uint64_t
nh_step(uint64_t w, uint64_t k)
{
	uint32_t lo = (uint32_t)w + (uint32_t)k;
	uint32_t hi = (uint32_t)(w >> 32) + (uint32_t)(k >> 32);

	return (uint64_t)lo * hi;
}

uint64_t
htab_hash(const struct htab *t, const void *key)
{
	const uint8_t *b = key;
	uint64_t h = t->key_size, w;
	size_t n = t->key_size, i;

	if (n > 8 * HTAB_NH_WORDS)
		return hash_bytes(key, n, t->seed);
	for (i = 0; n >= 8; i++, n -= 8, b += 8) {
		memcpy(&w, b, 8);
		h += nh_step(w, t->nh[i]);
	}
	if (n > 0) {
		w = 0;
		memcpy(&w, b, n);
		h += nh_step(w, t->nh[i]);
	}
	/* The home slot takes the low bits, and a product's low bits see
	 * only its factors' low bits: one multiply, then the high half
	 * (which every bit reaches) folded onto the low one. */
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

static inline uint32_t
home(const struct htab *t, const void *key)
{
	return (uint32_t)htab_hash(t, key) & t->mask;
}

/* Keys @p a and @p b of @p n bytes equal?  Words, inline: no call. */
static inline int
key_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint64_t x, y, d = 0;

	for (; n >= 8; n -= 8, a += 8, b += 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		d |= x ^ y;
	}
	for (; n > 0; n--)
		d |= (uint64_t)(*a++ ^ *b++);
	return d == 0;
}

int
htab_init(struct htab *t, uint32_t max, size_t key_size, size_t val_size)
{
	uint32_t slots = 16;

	memset(t, 0, sizeof(*t));
	while (slots < 2ull * max && slots < (1u << 30))
		slots <<= 1;
	t->key_size = (uint32_t)key_size;
	t->val_size = (uint32_t)val_size;
	t->key_off = 8;
	t->val_off = (uint32_t)((8 + key_size + 7) & ~(size_t)7);
	t->slot_size = (uint32_t)((t->val_off + val_size + 7) & ~(size_t)7);
	t->mask = slots - 1;
	t->max = max < slots / 2 ? max : slots / 2;
	/* A seed of its own: keys (flows) an attacker picks to collide
	 * under a seed known in advance would make every probe walk one
	 * long run. */
	if (getrandom(&t->seed, sizeof(t->seed), 0) != sizeof(t->seed) ||
	    getrandom(t->nh, sizeof(t->nh), 0) != sizeof(t->nh))
		return -1;
	t->slots = calloc(slots, t->slot_size);
	return t->slots == NULL ? -1 : 0;
}

void
htab_free(struct htab *t)
{
	free(t->slots);
	t->slots = NULL;
}

/* Slot of @p key or of the empty slot ending its probe sequence. */
static uint32_t
probe(const struct htab *t, const void *key)
{
	uint32_t i = home(t, key);

	while (SLOT(t, i)[0] &&
	       !key_eq(SLOT(t, i) + t->key_off, key, t->key_size))
		i = (i + 1) & t->mask;
	return i;
}

void *
htab_find(const struct htab *t, const void *key)
{
	uint8_t *s = SLOT(t, probe(t, key));

	return s[0] ? s + t->val_off : NULL;
}

void *
htab_insert(struct htab *t, const void *key, int *is_new)
{
	uint8_t *s = SLOT(t, probe(t, key));

	*is_new = 0;
	if (s[0])
		return s + t->val_off;
	if (t->n == t->max)
		return NULL;
	s[0] = 1;
	memcpy(s + t->key_off, key, t->key_size);
	memset(s + t->val_off, 0, t->val_size);
	t->n++;
	*is_new = 1;
	return s + t->val_off;
}

/* Empty slot @p i and pull later entries of the cluster back into the
 * hole, so that no probe sequence ever crosses an empty slot. */
static void
remove_at(struct htab *t, uint32_t i)
{
	uint32_t j = i, h;

	for (;;) {
		SLOT(t, i)[0] = 0;
		for (;;) {
			j = (j + 1) & t->mask;
			if (!SLOT(t, j)[0]) {
				t->n--;
				return;
			}
			h = home(t, SLOT(t, j) + t->key_off);
			/* stays if its home lies cyclically in (i, j] */
			if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
				continue;
			break;
		}
		memcpy(SLOT(t, i), SLOT(t, j), t->slot_size);
		i = j;
	}
}

int
htab_remove(struct htab *t, const void *key)
{
	uint32_t i = probe(t, key);

	if (!SLOT(t, i)[0])
		return -1;
	remove_at(t, i);
	return 0;
}

void *
htab_next(const struct htab *t, uint32_t *pos, const void **key)
{
	for (; *pos <= t->mask; (*pos)++) {
		uint8_t *s = SLOT(t, *pos);

		if (s[0]) {
			(*pos)++;
			if (key != NULL)
				*key = s + t->key_off;
			return s + t->val_off;
		}
	}
	return NULL;
}

uint32_t
htab_sweep(struct htab *t, uint32_t *cursor, uint32_t budget,
	   int (*gone)(const void *key, void *val, void *arg), void *arg)
{
	uint32_t removed = 0, i = *cursor & t->mask;

	/* The budget counts slots moved past, not removals: a sweep of
	 * mask + 1 slots sees every entry however many it removes. */
	while (budget > 0 && t->n > 0) {
		uint8_t *s = SLOT(t, i);

		/* after a removal slot i holds a pulled-back entry: look
		 * at it again before moving on */
		if (s[0] && gone(s + t->key_off, s + t->val_off, arg)) {
			remove_at(t, i);
			removed++;
			continue;
		}
		i = (i + 1) & t->mask;
		budget--;
	}
	*cursor = i;
	return removed;
}
