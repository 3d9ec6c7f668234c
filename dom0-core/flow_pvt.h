/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow table, shared by flow.c (sets, data path) and flow_cmds.c. */
#ifndef XNV_FLOW_PVT_H
#define XNV_FLOW_PVT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "flow.h"
#include "flow_rule.h"
#include "sizes.h"

struct rte_hash;
struct rte_rcu_qsbr;
struct xnv_acl;
struct flow_cache_way;

/* What the data path reads.  Slot i (rule id i + 1) of chain and rank
 * is written before the rule is published in the tries or the hash, and
 * not again while it is. */
struct flow_set {
	struct xnv_acl *acl;		/* NULL: no wildcard rule */
	struct rte_hash *exact;		/* shared by the sets of one hash */
	_Atomic unsigned n_exact;	/* keys in it */
	unsigned bank;			/* of the hit counters */
	/* What the data path's verdict cache (flow_path.c) tags an entry
	 * with: the set's id (unique) and how many times keys were added
	 * to or deleted from the hash since the set was swapped in. */
	uint32_t id;
	_Atomic uint32_t xgen;
	uint16_t chain[XNV_MAX_FLOWS];	/* by slot */
	uint64_t rank[XNV_MAX_FLOWS];	/* higher wins */
};

/* A rule; its id is its index + 1.  Control side only (under mu). */
struct flow_slot {
	uint8_t used;
	uint8_t exact;			/* in the hash, not the tries */
	uint16_t chain;			/* chain version (chain.c) */
	uint64_t seq;			/* added as the seq-th: ties */
	char name[XNV_NAME_LEN];	/* [flow NAME], "" if added live */
	struct xnv_flow_rule r;
};

struct xnv_flows {
	pthread_mutex_t mu;		/* one change at a time */
	struct flow_set *_Atomic live;	/* the data path's; NULL: none */
	uint32_t sets;			/* made so far: the next set's id */
	/* Each worker (worker.h) classifies what its own rx queues take,
	 * with a verdict cache of its own (flow_path.c) and its own reader
	 * id in qs (its worker id): n_workers of each. */
	unsigned n_workers;
	struct flow_cache_way *cache[XNV_MAX_WORKERS];
	struct rte_rcu_qsbr *qs;
	_Atomic unsigned n;		/* rules in force */
	uint64_t seq;
	uint64_t build_us;		/* of the last set built */
	/* Hit counters by worker, bank and slot, each written by its
	 * worker only (summed by xnv_flows_hits()).  Two banks: a set
	 * replacing every rule (clear, reload) counts in the other one,
	 * zeroed first, so a reused id never mixes the old rule's hits in
	 * (the old set may count for a moment after the swap). */
	_Atomic uint64_t (*hits)[2][XNV_MAX_FLOWS];	/* [n_workers] */
	struct flow_slot slot[XNV_MAX_FLOWS];
};

/** The verdict cache of the data path, zeroed (rte_malloc); NULL: out
 *  of memory. */
struct flow_cache_way *xnv_flow_cache_new(void);
/** After a key of @p s's hash was added or deleted: what the data path
 *  cached under @p s is stale. */
void xnv_flow_set_changed(struct flow_set *s);

/** Put used slot @p i (its chain taken) in force; on failure (-ENOMEM,
 *  a reason in @p err) it is unused again and nothing changed. */
int xnv_flows_put(struct xnv_flows *f, unsigned i, char *err, size_t errlen);
/** Take slot @p i out of force; on failure it stays. */
int xnv_flows_take_out(struct xnv_flows *f, unsigned i, char *err,
		       size_t errlen);
/** Put the slots as they are now in force, all at once (a new hash and
 *  new tries); on failure nothing changed, and the caller puts the
 *  slots back as they were. */
int xnv_flows_replace(struct xnv_flows *f, char *err, size_t errlen);
/** Packets rule slot @p i matched since it was put in force. */
uint64_t xnv_flows_hits(struct xnv_flows *f, unsigned i);
/** 1 if @p r is an exact 5-tuple rule (the hash's kind). */
int xnv_flow_is_exact(const struct xnv_flow_rule *r);

/** Take chain versions for @p n chains, @p stride bytes apart from
 *  @p ch, into @p ids, on the main loop; all or none.  0 or -errno. */
int xnv_flows_take_chains(const struct xnv_chain *ch, size_t stride,
			  uint16_t *ids, unsigned n);
/** Let @p n chain versions go, on the main loop. */
void xnv_flows_drop_chains(uint16_t *ids, unsigned n);

#endif /* XNV_FLOW_PVT_H */
