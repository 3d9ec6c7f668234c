/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow director: rules (flow_rule.h) -> chains, in two tables:
 *   - exact rules (one protocol with ports, two host addresses, one port
 *     each side, any VLAN and input port: the classic 5-tuple) in an
 *     rte_hash, changed in place (lock-free readers, one writer): adding
 *     one is cheap whatever the table holds;
 *   - every other rule in rte_acl tries, which cannot change in place: a
 *     change builds a whole new set on the control side (the telemetry
 *     thread of the command, or main at start: never the data path) and
 *     swaps it in with one pointer store.  A burst classifies under one
 *     set, old or new, never half of each.
 * A packet matched in both takes the better rule (priority, then the
 * older).  What the data path might still read (an old set, a deleted
 * key's slot in the hash) is freed only once every worker that
 * classifies (worker.h: each its own rx queues') has passed a quiescent
 * state (rte_rcu_qsbr, a reader id a worker, reported once a
 * millisecond from each loop; a worker about to sleep goes offline).
 *
 * Each worker caches each flow's verdict under the set's id
 * (flow_path.c); a new set or a change to the hash makes it stale.
 *
 * Changes are serialised by a mutex; chain versions (chain.c) are the
 * data path's and are taken and let go on the main loop
 * (xnv_ctl_on_loop).  Rule ids are slot + 1 and stable while the rule
 * lives; hit counters are per worker and slot, each written by its
 * worker only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "chain.h"
#include "classify.h"
#include "core.h"
#include "ctl.h"
#include "flow_acl.h"
#include "flow_pvt.h"

/* Exact rules are keyed by a packet's flow key up to its ethertype. */
#define EXACT_KEY_LEN offsetof(struct xnv_flow_key, vlan)

static struct rte_hash *
new_hash(void)
{
	static unsigned gen;	/* names must be unique */
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = XNV_MAX_FLOWS,
		.key_len = EXACT_KEY_LEN,
		.hash_func = rte_hash_crc,
		.socket_id = (int)rte_socket_id(),
		/* The data path reads while a command writes; a deleted
		 * key's slot is freed by us after a grace period.  Bucket
		 * overflow goes to an extension table: every one of
		 * XNV_MAX_FLOWS keys fits whatever their hashes. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			      RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};

	snprintf(name, sizeof(name), "xnv-flows-%u", gen++);
	return rte_hash_create(&hp);
}

/* A set with no rule and a new id (0 stays unused: an empty cache way). */
static struct flow_set *
new_set(struct xnv_flows *f)
{
	struct flow_set *s = rte_zmalloc("xnv-flow-set", sizeof(*s), 0);

	if (s == NULL)
		return NULL;
	if (++f->sets == 0)
		f->sets = 1;
	s->id = f->sets;
	return s;
}

static void
set_free(struct flow_set *s, int with_hash)
{
	if (s == NULL)
		return;
	xnv_acl_free(s->acl);
	if (with_hash)
		rte_hash_free(s->exact);
	rte_free(s);
}

int
xnv_flow_is_exact(const struct xnv_flow_rule *r)
{
	int host = r->family == 4 ? 32 : 128;

	return r->family != 0 && r->src_len == host && r->dst_len == host &&
	       (r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP ||
		r->proto == IPPROTO_SCTP) && r->sport[0] == r->sport[1] &&
	       r->dport[0] == r->dport[1] && r->vlan == XNV_FLOW_ANY &&
	       r->in_port == XNV_FLOW_ANY;
}

/* The flow key an exact rule matches. */
static void
exact_key(const struct xnv_flow_rule *r, struct xnv_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->src, r->src, r->family == 4 ? 4 : 16);
	memcpy(k->dst, r->dst, r->family == 4 ? 4 : 16);
	k->sport = rte_cpu_to_be_16(r->sport[0]);
	k->dport = rte_cpu_to_be_16(r->dport[0]);
	k->proto = (uint8_t)r->proto;
	k->v6 = r->family == 6;
	k->ethertype = k->v6 ? XNV_ETHER_IPV6 : XNV_ETHER_IPV4;
}

/* Higher priority first, then the rule added earlier. */
static uint64_t
rank_of(const struct flow_slot *s)
{
	return (uint64_t)s->r.priority << 32 | (UINT32_MAX - (uint32_t)s->seq);
}

static int
by_rank(const void *a, const void *b, void *arg)
{
	const struct flow_slot *s = arg;
	uint64_t x = rank_of(&s[*(const unsigned *)a]);
	uint64_t y = rank_of(&s[*(const unsigned *)b]);

	return x > y ? -1 : x < y;
}

/* Slot @p i's chain and rank into @p s. */
static void
publish_slot(struct xnv_flows *f, struct flow_set *s, unsigned i)
{
	s->chain[i] = f->slot[i].chain;
	s->rank[i] = rank_of(&f->slot[i]);
}

/* Tries of the used slots not in the hash into *@p out (NULL: none). */
static int
build(struct xnv_flows *f, struct xnv_acl **out, char *err, size_t errlen)
{
	const struct xnv_flow_rule **rules = malloc(sizeof(*rules) *
						    XNV_MAX_FLOWS);
	unsigned *order = malloc(sizeof(*order) * XNV_MAX_FLOWS), i, n = 0;
	uint32_t *ids = malloc(sizeof(*ids) * XNV_MAX_FLOWS);
	uint64_t t0 = rte_rdtsc();
	int rc = -ENOMEM;

	*out = NULL;
	if (order == NULL || ids == NULL || rules == NULL)
		goto out;
	for (i = 0; i < XNV_MAX_FLOWS; i++)
		if (f->slot[i].used && !f->slot[i].exact)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), by_rank, f->slot);
	for (i = 0; i < n; i++) {
		rules[i] = &f->slot[order[i]].r;
		ids[i] = order[i] + 1;
	}
	rc = 0;
	if (n > 0 && (*out = xnv_acl_build(rules, ids, n, err, errlen)) == NULL)
		rc = -ENOMEM;
	f->build_us = (rte_rdtsc() - t0) * 1000000 / rte_get_tsc_hz();
	if (xnv_acl_parts(*out, 0) > 1 || xnv_acl_parts(*out, 1) > 1)
		XLOG(INFO, "%u flow rules in tries: %u IPv4 and %u IPv6 sets "
		     "(rte_acl refused them whole), built in %.1f ms\n", n,
		     xnv_acl_parts(*out, 0), xnv_acl_parts(*out, 1),
		     f->build_us / 1000.0);
out:
	free(order);
	free(ids);
	free(rules);
	if (rc == -ENOMEM && err[0] == '\0')
		snprintf(err, errlen, "out of memory building the rule set");
	return rc;
}

/* Make @p s the data path's set; free the one it replaces (its hash too
 * when @p s has another). */
static void
swap_in(struct xnv_flows *f, struct flow_set *s)
{
	/* Release: the set (tries, hash, counts) and the slots' chain and
	 * rank are written before the data path can load the pointer
	 * (acquire in classify). */
	struct flow_set *old = atomic_exchange_explicit(&f->live, s,
							memory_order_acq_rel);

	/* Waits until the data path reported a quiescent state after the
	 * exchange: no burst can still be using the old set. */
	rte_rcu_qsbr_synchronize(f->qs, RTE_QSBR_THRID_INVALID);
	set_free(old, old != NULL && old->exact != s->exact);
}

/* Every worker's hits of slot @p i in @p bank to 0 (nothing counts
 * there: the slot is unused in the sets that count in that bank). */
static void
hits_zero(struct xnv_flows *f, unsigned bank, unsigned i)
{
	unsigned w;

	for (w = 0; w < f->n_workers; w++)
		atomic_store_explicit(&f->hits[w][bank][i], 0,
				      memory_order_relaxed);
}

static void
count(struct xnv_flows *f)
{
	unsigned i, n = 0;

	for (i = 0; i < XNV_MAX_FLOWS; i++)
		n += f->slot[i].used;
	atomic_store_explicit(&f->n, n, memory_order_relaxed);
}

/* New tries from the slots, the live hash kept. */
static int
rebuild(struct xnv_flows *f, char *err, size_t errlen)
{
	struct flow_set *old = atomic_load(&f->live);
	struct flow_set *s = new_set(f);
	unsigned i;
	int rc;

	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((rc = build(f, &s->acl, err, errlen)) < 0) {
		rte_free(s);
		return rc;
	}
	for (i = 0; i < XNV_MAX_FLOWS; i++)
		if (f->slot[i].used)
			publish_slot(f, s, i);
	s->exact = old->exact;
	s->bank = old->bank;
	atomic_store(&s->n_exact, atomic_load(&old->n_exact));
	swap_in(f, s);
	count(f);
	return 0;
}

/* Key of slot @p i into @p h; 0, or -EEXIST (the key is taken). */
static int
hash_put(struct xnv_flows *f, struct rte_hash *h, unsigned i)
{
	struct xnv_flow_key k;
	int rc;

	exact_key(&f->slot[i].r, &k);
	if (rte_hash_lookup(h, &k) >= 0)
		return -EEXIST;
	/* The LF hash publishes the key with release semantics: chain and
	 * rank (publish_slot) are visible first. */
	rc = rte_hash_add_key_data(h, &k, (void *)(uintptr_t)(i + 1));
	return rc < 0 ? rc : 0;
}

int
xnv_flows_put(struct xnv_flows *f, unsigned i, char *err, size_t errlen)
{
	struct flow_set *s = atomic_load(&f->live);
	struct flow_slot *sl = &f->slot[i];
	int rc;

	/* slot i is not in use in s: nothing counts there now */
	hits_zero(f, s->bank, i);
	publish_slot(f, s, i);
	/* An exact rule whose key another rule holds goes to the tries. */
	sl->exact = xnv_flow_is_exact(&sl->r) && hash_put(f, s->exact, i) == 0;
	if (sl->exact) {
		atomic_fetch_add(&s->n_exact, 1);
		xnv_flow_set_changed(s);
		count(f);
		return 0;
	}
	if ((rc = rebuild(f, err, errlen)) < 0)
		sl->used = 0;
	return rc;
}

int
xnv_flows_take_out(struct xnv_flows *f, unsigned i, char *err, size_t errlen)
{
	struct flow_set *s = atomic_load(&f->live);
	struct flow_slot *sl = &f->slot[i];
	struct xnv_flow_key k;
	int32_t pos;
	int rc;

	sl->used = 0;
	if (!sl->exact) {
		if ((rc = rebuild(f, err, errlen)) < 0)
			sl->used = 1;
		return rc;
	}
	exact_key(&sl->r, &k);
	pos = rte_hash_del_key(s->exact, &k);
	atomic_fetch_sub(&s->n_exact, 1);
	xnv_flow_set_changed(s);
	/* The data path may still hold the key's slot: free it after. */
	rte_rcu_qsbr_synchronize(f->qs, RTE_QSBR_THRID_INVALID);
	if (pos >= 0)
		rte_hash_free_key_with_position(s->exact, pos);
	count(f);
	return 0;
}

uint64_t
xnv_flows_hits(struct xnv_flows *f, unsigned i)
{
	const struct flow_set *s = atomic_load(&f->live);
	uint64_t n = 0;
	unsigned w;

	for (w = 0; s != NULL && w < f->n_workers; w++)
		n += atomic_load_explicit(&f->hits[w][s->bank][i],
					  memory_order_relaxed);
	return n;
}

int
xnv_flows_replace(struct xnv_flows *f, char *err, size_t errlen)
{
	struct flow_set *old = atomic_load(&f->live);
	struct flow_set *s = new_set(f);
	unsigned i, n = 0;
	int rc = -ENOMEM;

	if (s == NULL || (s->exact = new_hash()) == NULL)
		goto fail;
	/* The other bank: nothing counts there since the last replace's
	 * grace period ended. */
	s->bank = old != NULL ? !old->bank : 0;
	for (i = 0; i < XNV_MAX_FLOWS; i++)
		hits_zero(f, s->bank, i);
	for (i = 0; i < XNV_MAX_FLOWS; i++) {
		struct flow_slot *sl = &f->slot[i];

		if (!sl->used)
			continue;
		publish_slot(f, s, i);
		sl->exact = xnv_flow_is_exact(&sl->r) &&
			    hash_put(f, s->exact, i) == 0;
		n += sl->exact;
	}
	atomic_store(&s->n_exact, n);
	if ((rc = build(f, &s->acl, err, errlen)) < 0)
		goto fail;
	swap_in(f, s);
	count(f);
	return 0;
fail:
	if (s != NULL)
		rte_hash_free(s->exact);
	rte_free(s);
	if (err[0] == '\0')
		snprintf(err, errlen, "out of memory");
	return rc;
}

struct chain_job {
	unsigned n;
	const char *ch;			/* n chains to take, stride apart, */
	size_t stride;			/* or */
	uint16_t *ids;			/* n ids: out, or to let go */
	int rc;
};

static void
take_chains(struct xnv_core *c, void *arg)
{
	struct chain_job *j = arg;
	unsigned i;
	int id;

	for (i = 0; i < j->n; i++) {
		id = xnv_chain_new(c, (const struct xnv_chain *)
				    (j->ch + i * j->stride));
		if (id < 0) {
			while (i-- > 0)
				xnv_chain_unuse(c, j->ids[i]);
			j->rc = id;
			return;
		}
		j->ids[i] = (uint16_t)id;
	}
	j->rc = 0;
}

static void
drop_chains(struct xnv_core *c, void *arg)
{
	struct chain_job *j = arg;
	unsigned i;

	for (i = 0; i < j->n; i++)
		xnv_chain_unuse(c, j->ids[i]);
	j->rc = 0;
}

int
xnv_flows_take_chains(const struct xnv_chain *ch, size_t stride,
		      uint16_t *ids, unsigned n)
{
	struct chain_job j = { .n = n, .ch = (const char *)ch,
			       .stride = stride, .ids = ids };
	int rc = xnv_ctl_on_loop(take_chains, &j);

	return rc < 0 ? rc : j.rc;
}

void
xnv_flows_drop_chains(uint16_t *ids, unsigned n)
{
	struct chain_job j = { .n = n, .ids = ids };

	if (n > 0 && xnv_ctl_on_loop(drop_chains, &j) < 0)
		XLOG(WARNING, "flow rules: %u chain versions not let go (the "
		     "main loop did not answer)\n", n);
}

/* Rules of the config, at start (main, before the loop). */
static int
load_config(struct xnv_core *c, char *err, size_t errlen)
{
	struct xnv_flows *f = c->flows;
	unsigned i;
	int rc;

	for (i = 0; i < c->cfg.n_flows; i++) {
		struct flow_slot *s = &f->slot[i];

		rc = xnv_flows_take_chains(&c->cfg.flows[i].chain, 0,
					   &s->chain, 1);
		if (rc < 0) {
			snprintf(err, errlen, "chain table full");
			return rc;
		}
		s->used = 1;
		s->seq = ++f->seq;
		s->r = c->cfg.flows[i].rule;
		snprintf(s->name, sizeof(s->name), "%s", c->cfg.flows[i].name);
	}
	rc = xnv_flows_replace(f, err, errlen);
	if (rc == 0 && c->cfg.n_flows > 0)
		XLOG(INFO, "%u flow rules from the config (%u exact), built "
		     "in %.1f ms\n", c->cfg.n_flows, xnv_flows_exact(c),
		     f->build_us / 1000.0);
	return rc;
}

static void
flows_free(struct xnv_flows *f)
{
	unsigned w;

	for (w = 0; w < f->n_workers; w++)
		rte_free(f->cache[w]);
	rte_free(f->hits);
	rte_free(f->qs);
	rte_free(f);
}

/* A reader id, a verdict cache and hit counters for each of [core]
 * workers (registered offline: xnv_flows_online()).  0 or -ENOMEM. */
static int
flows_readers(struct xnv_flows *f, unsigned n)
{
	unsigned w;

	f->n_workers = n;
	f->qs = rte_zmalloc("xnv-flows-rcu", rte_rcu_qsbr_get_memsize(n),
			    RTE_CACHE_LINE_SIZE);
	f->hits = rte_zmalloc("xnv-flows-hits", n * sizeof(*f->hits),
			      RTE_CACHE_LINE_SIZE);
	if (f->qs == NULL || f->hits == NULL || rte_rcu_qsbr_init(f->qs, n))
		return -ENOMEM;
	for (w = 0; w < n; w++)
		if ((f->cache[w] = xnv_flow_cache_new()) == NULL ||
		    rte_rcu_qsbr_thread_register(f->qs, w) != 0)
			return -ENOMEM;
	return 0;
}

int
xnv_flows_create(struct xnv_core *c, char *err, size_t errlen)
{
	struct xnv_flows *f;

	f = rte_zmalloc("xnv-flows", sizeof(*f), 0);
	if (f == NULL)
		return -ENOMEM;
	if (flows_readers(f, RTE_MAX(c->cfg.workers, 1u)) < 0) {
		flows_free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->mu, NULL);
	c->flows = f;
	return load_config(c, err, errlen);
}

void
xnv_flows_destroy(struct xnv_core *c)
{
	struct xnv_flows *f = c->flows;

	if (f == NULL)
		return;
	set_free(atomic_load(&f->live), 1);
	flows_free(f);
	c->flows = NULL;
}

void
xnv_flows_online(struct xnv_core *c, unsigned w, int on)
{
	if (c->flows == NULL)	/* a harness without the table (bench/) */
		return;
	if (on)
		rte_rcu_qsbr_thread_online(c->flows->qs, w);
	else
		rte_rcu_qsbr_thread_offline(c->flows->qs, w);
}

void
xnv_flows_quiescent(struct xnv_core *c, unsigned w)
{
	if (c->flows != NULL)
		rte_rcu_qsbr_quiescent(c->flows->qs, w);
}

unsigned
xnv_flows_count(const struct xnv_core *c)
{
	return c->flows != NULL ?
	       atomic_load_explicit(&c->flows->n, memory_order_relaxed) : 0;
}

int
xnv_flows_active(const struct xnv_core *c)
{
	return xnv_flows_count(c) > 0;
}

unsigned
xnv_flows_exact(const struct xnv_core *c)
{
	const struct flow_set *s = atomic_load(&c->flows->live);

	return s != NULL ? atomic_load(&s->n_exact) : 0;
}
