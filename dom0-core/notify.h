/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telling a service manager where the core is (sd_notify(3), the
 * NOTIFY_SOCKET protocol of systemd's Type=notify units):
 *
 *   READY=1     once every port is started and the NF socket listens
 *               (after setup(), main.c): units ordered After= it start
 *               only when an NF can attach;
 *   STOPPING=1  when the core starts to stop (signal, --duration, ...).
 *
 * Nothing is sent when NOTIFY_SOCKET is unset.  Built without libsystemd
 * (pkg-config libsystemd not found: dom0-core/build.mk), the core logs
 * one warning when NOTIFY_SOCKET is set and sends nothing.
 */
#ifndef XNV_NOTIFY_H
#define XNV_NOTIFY_H

/** Send @p state ("READY=1\nSTATUS=...") to the service manager, if
 *  NOTIFY_SOCKET names one; a failure is logged, never fatal. */
void xnv_notify(const char *state);

#endif /* XNV_NOTIFY_H */
