/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/teardown.c - pcw_unregister and pcw_provider_close:
 * what ends in which order, and why a handle used after its end is refused
 * (handles.c). The order for programs is in the README: instances, then
 * registrations, then the provider, each step optional because the next
 * one does it for whatever is still open. Private (see internal.h).
 */
#include "internal.h"

/* Unregister a registration whose handle was claimed (pcw_unregister,
 * pcw_provider_close). */
static void pcw__unregister_record(pcw__reg *r)
{
    pcw__prov *p = r->prov;
    r->handle = NULL;
    struct cds_lfht_iter it;
    struct cds_lfht_node *node;
    urcu_bp_read_lock();
    cds_lfht_first(r->names, &it);
    while ((node = cds_lfht_iter_get_node(&it)) != NULL) {
        cds_lfht_next(r->names, &it);
        pcw__inst *in = caa_container_of(node, pcw__inst, node);
        urcu_bp_read_unlock();
        /* Through its handle, so that the program's copies of it become
         * invalid; one a concurrent close claimed first is that close's. */
        if (pcw__handle_claim(in->handle, PCW__HANDLE_INSTANCE) == in)
            pcw__close_record(in);
        urcu_bp_read_lock();
    }
    urcu_bp_read_unlock();
    /* Reuse nothing any more, but free the closed instances after the
     * grace period that makes them unreachable. */
    pthread_mutex_lock(&r->lock);
    pcw__vec batch = r->limbo;
    memset(&r->limbo, 0, sizeof r->limbo);
    pthread_mutex_unlock(&r->lock);
    urcu_bp_synchronize_rcu();
    pcw__reclaim(r, &batch);
    pthread_mutex_lock(&p->lock);
    /* The counterset's segment memory stays (consumers may be reading it);
     * marking it dead hides it. */
    __atomic_store_n(&r->cset->state, PCW_CSET_DEAD, __ATOMIC_RELEASE);
    pcw__list_del_rcu(&r->node);
    pcw__bump_generation(p);
    pthread_mutex_unlock(&p->lock);
    /* Control-channel threads may still be walking past r. */
    urcu_bp_synchronize_rcu();
    PCW__TSAN_GRACE_PERIOD(&p->regs); /* after every walk that could see r */
    /* ...or running its callback, which they found before the grace period. */
    pcw__control_forget(r);
    pcw__free_registration(r);
}

int pcw_unregister(pcw_registration *h)
{
    if (!h)
        return PCW_OK;
    /* Check and invalidate in one step: unregistering twice, or after the
     * provider closed, finds the handle gone and touches nothing. */
    pcw__reg *r = (pcw__reg *)pcw__handle_claim(h, PCW__HANDLE_REGISTRATION);
    if (!r)
        return PCW_E_INVALID_HANDLE;
    pcw__unregister_record(r);
    return PCW_OK;
}

int pcw_provider_close(pcw_provider *h)
{
    if (!h)
        return PCW_OK;
    pcw__prov *p = (pcw__prov *)pcw__handle_claim(h, PCW__HANDLE_PROVIDER);
    if (!p)
        return PCW_E_INVALID_HANDLE; /* closed already */
    pcw__control_stop(p);
    while (!cds_list_empty(&p->regs)) {
        pcw__reg *r = cds_list_entry(p->regs.next, pcw__reg, node);
        pcw__handle_claim(r->handle, PCW__HANDLE_REGISTRATION);
        pcw__unregister_record(r);
    }
    __atomic_store_n(&p->hdr->state, PCW_SEG_STATE_CLOSED, __ATOMIC_RELEASE);
    unlink(p->path);
    munmap(p->base, p->max_size);
    close(p->fd);
    for (size_t i = 0; i < PCW__NAME_CLASSES; i++)
        free(p->name_free[i].v);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return PCW_OK;
}
